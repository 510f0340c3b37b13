"""Prices, per-call cost and usage summaries: pure functions, no openai import.

``OAI_PRICE1K`` maps a model name to its USD price per 1,000 tokens, either an
``(input, output)`` tuple or one number for all tokens (older completion models). Prices change;
a ``price`` entry in a config (``[prompt_per_1k, completion_per_1k]``) overrides the table, and a
model missing from it costs 0 with one logged warning per model name.

Usage summaries have AutoGen's shape::

    {"total_cost": float,
     "<model>": {"cost": float, "prompt_tokens": int,
                 "completion_tokens": int, "total_tokens": int}}

and a model's entry also holds ``cached_tokens``, ``cache_creation_tokens`` and
``reasoning_tokens`` once one of its responses reported them (``DETAIL_KEYS``: parts of the
prompt and completion counts, never added to the total). AutoGen's own readers of a summary
read the four keys by name, so the extra keys pass them by.

Differences from AutoGen, each on purpose:

* Dated snapshot names (``gpt-4o-2024-11-20``) and Azure names without dots (``gpt-35-turbo``)
  are priced from their base model instead of costing 0.
* ``update_usage_summary`` returns a new summary instead of updating one in place, and counts a
  ``None`` token count or cost as 0 (AutoGen only forgives ``completion_tokens``).
* The unknown-model warning is logged once per model name per process, not on every call.
* ``format_usage_summary`` also accepts a tuple mode; its wording is parley's own.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..usage._run import DETAIL_KEYS

__all__ = [
    "DETAIL_KEYS",
    "OAI_PRICE1K",
    "USAGE_KEYS",
    "cache_write_tokens",
    "cached_prompt_tokens",
    "checked_price",
    "compute_cost",
    "format_usage_summary",
    "model_price",
    "reasoning_tokens",
    "response_usage",
    "update_usage_summary",
    "usage_details",
]

logger = logging.getLogger(__name__)

# USD per 1k tokens, (input, output). Sources: the providers' public price pages.
OAI_PRICE1K: dict[str, float | tuple[float, float]] = {
    # GPT-5 family
    "gpt-5": (0.00125, 0.01),
    "gpt-5-chat-latest": (0.00125, 0.01),
    "gpt-5-mini": (0.00025, 0.002),
    "gpt-5-nano": (0.00005, 0.0004),
    # GPT-4.1 family
    "gpt-4.1": (0.002, 0.008),
    "gpt-4.1-mini": (0.0004, 0.0016),
    "gpt-4.1-nano": (0.0001, 0.0004),
    "gpt-4.5-preview": (0.075, 0.15),
    # GPT-4o family; the first snapshot kept its launch price
    "gpt-4o": (0.0025, 0.01),
    "gpt-4o-2024-05-13": (0.005, 0.015),
    "gpt-4o-2024-08-06": (0.0025, 0.01),
    "gpt-4o-2024-11-20": (0.0025, 0.01),
    "chatgpt-4o-latest": (0.005, 0.015),
    "gpt-4o-mini": (0.00015, 0.0006),
    "gpt-4o-mini-2024-07-18": (0.00015, 0.0006),
    # reasoning models
    "o1": (0.015, 0.06),
    "o1-2024-12-17": (0.015, 0.06),
    "o1-preview": (0.015, 0.06),
    "o1-preview-2024-09-12": (0.015, 0.06),
    "o1-mini": (0.0011, 0.0044),
    "o1-mini-2024-09-12": (0.0011, 0.0044),
    "o1-pro": (0.15, 0.6),
    "o3": (0.002, 0.008),
    "o3-pro": (0.02, 0.08),
    "o3-mini": (0.0011, 0.0044),
    "o4-mini": (0.0011, 0.0044),
    # GPT-4 Turbo and GPT-4
    "gpt-4-turbo": (0.01, 0.03),
    "gpt-4-turbo-2024-04-09": (0.01, 0.03),
    "gpt-4-turbo-preview": (0.01, 0.03),
    "gpt-4-0125-preview": (0.01, 0.03),
    "gpt-4-1106-preview": (0.01, 0.03),
    "gpt-4-vision-preview": (0.01, 0.03),
    "gpt-4-1106-vision-preview": (0.01, 0.03),
    "gpt-4": (0.03, 0.06),
    "gpt-4-0314": (0.03, 0.06),
    "gpt-4-0613": (0.03, 0.06),
    "gpt-4-32k": (0.06, 0.12),
    "gpt-4-32k-0314": (0.06, 0.12),
    "gpt-4-32k-0613": (0.06, 0.12),
    # GPT-3.5 Turbo; the plain name is the 0125 snapshot
    "gpt-3.5-turbo": (0.0005, 0.0015),
    "gpt-3.5-turbo-0125": (0.0005, 0.0015),
    "gpt-3.5-turbo-1106": (0.001, 0.002),
    "gpt-3.5-turbo-0613": (0.0015, 0.002),
    "gpt-3.5-turbo-0301": (0.0015, 0.002),
    "gpt-3.5-turbo-16k": (0.003, 0.004),
    "gpt-3.5-turbo-16k-0613": (0.003, 0.004),
    "gpt-3.5-turbo-instruct": (0.0015, 0.002),
    # Azure deployment names without the dot
    "gpt-35-turbo": (0.0005, 0.0015),
    "gpt-35-turbo-0125": (0.0005, 0.0015),
    "gpt-35-turbo-1106": (0.001, 0.002),
    "gpt-35-turbo-0613": (0.0015, 0.002),
    "gpt-35-turbo-0301": (0.0015, 0.002),
    "gpt-35-turbo-16k": (0.003, 0.004),
    "gpt-35-turbo-16k-0613": (0.003, 0.004),
    "gpt-35-turbo-instruct": (0.0015, 0.002),
    # completion-era models, one price for all tokens
    "davinci-002": 0.002,
    "babbage-002": 0.0004,
    "text-davinci-003": 0.02,
    "text-davinci-002": 0.02,
    "text-curie-001": 0.002,
    "text-babbage-001": 0.0005,
    "text-ada-001": 0.0004,
    "code-davinci-002": 0.1,
    "code-cushman-001": 0.024,
    # other OpenAI-compatible endpoints AutoGen prices
    "deepseek-chat": (0.00014, 0.00028),
}

# What one response's usage must carry to be counted (ModelClient.RESPONSE_USAGE_KEYS).
USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens", "cost", "model")
_COUNT_KEYS = ("cost", "prompt_tokens", "completion_tokens", "total_tokens")

# A snapshot suffix: -2024-11-20 or -0613. Only this is stripped, never arbitrary trailing parts,
# so gpt-4o-mini can't fall back to gpt-4o and gpt-4-32k can't fall back to gpt-4.
_SNAPSHOT_SUFFIX = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{4})$")

_warned_models: set[str | None] = set()
_warned_lock = threading.Lock()


def _lookup_names(model: str) -> Iterable[str]:
    names = [model]
    lowered = model.strip().lower()
    if lowered != model:
        names.append(lowered)
    if "/" in lowered:  # "openai/gpt-4o" as routers and proxies spell it
        names.append(lowered.rsplit("/", 1)[1])
    names += ["gpt-3.5" + n[len("gpt-35") :] for n in names if n.startswith("gpt-35")]
    for name in names:
        yield name
        base = _SNAPSHOT_SUFFIX.sub("", name)
        if base != name:
            yield base


def _as_pair(price: float | tuple[float, float]) -> tuple[float, float]:
    if isinstance(price, (int, float)):
        return (float(price), float(price))
    return (float(price[0]), float(price[1]))


def model_price(model: str | None) -> tuple[float, float] | None:
    """The ``(input, output)`` USD price per 1k tokens of ``model``, or ``None`` if unknown.

    Exact names win; otherwise a dated snapshot resolves to its base model and an Azure name
    such as ``gpt-35-turbo-16k`` to ``gpt-3.5-turbo-16k``. Reads ``OAI_PRICE1K`` on every call,
    so entries a user adds to it count.
    """
    if not isinstance(model, str):
        return None
    for name in _lookup_names(model):
        price = OAI_PRICE1K.get(name)
        if price is not None:
            return _as_pair(price)
    return None


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def checked_price(price: object) -> tuple[float, float]:
    """A config's ``price`` as (prompt, completion) USD per 1000 tokens; one number serves
    both (with a warning). A ValueError names what is wrong with it."""
    if _is_number(price):
        rate = float(price)  # type: ignore[arg-type]
        if not math.isfinite(rate) or rate < 0:
            raise ValueError(f"price must be a finite number >= 0, got {price!r}")
        logger.warning(
            "price %r is a single number: using it for both prompt and completion tokens. "
            "Give [prompt_price_per_1k, completion_price_per_1k] if they differ.",
            price,
        )
        return (rate, rate)
    if not isinstance(price, (list, tuple)) or len(price) != 2:
        raise ValueError(
            f"price must be [prompt_price_per_1k, completion_price_per_1k], got {price!r}"
        )
    if not all(_is_number(p) and math.isfinite(p) and p >= 0 for p in price):
        raise ValueError(f"price must hold two finite numbers >= 0, got {price!r}")
    return (float(price[0]), float(price[1]))


def _checked_tokens(name: str, value: object) -> int:
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0 or None, got {value!r}")
    return value


def compute_cost(
    model: str | None,
    prompt_tokens: int | None,
    completion_tokens: int | None,
    price: Sequence[float] | float | None = None,
    *,
    cached_tokens: int | None = 0,
    cached_rate: float | None = None,
    written: Iterable[tuple[int, float]] = (),
) -> float:
    """USD cost of one call.

    ``price`` (a config's ``[prompt_per_1k, completion_per_1k]``, or one number for both) overrides
    the table. A model the table doesn't know costs 0.0, with a warning logged once per name.
    ``cached_tokens`` of the prompt tokens (read from the provider's prompt cache) cost
    ``cached_rate`` USD per 1k instead of the input price when a rate is given (the model
    profile's ``cached_input_per_1m``); ``written`` are ``(tokens, rate)`` pairs of prompt
    tokens written to the cache, billed at their own rate (Anthropic's cache writes; they
    too are part of ``prompt_tokens``). Reasoning tokens are part of ``completion_tokens``,
    as OpenAI reports and bills them.
    """
    n_prompt = _checked_tokens("prompt_tokens", prompt_tokens)
    n_completion = _checked_tokens("completion_tokens", completion_tokens)
    n_cached = min(_checked_tokens("cached_tokens", cached_tokens), n_prompt)
    if price is not None:
        rates: tuple[float, float] | None = checked_price(price)
    else:
        rates = model_price(model)
    if rates is None:
        _warn_unknown_model(model)
        return 0.0
    if cached_rate is None:
        n_cached = 0
    fresh = n_prompt - n_cached
    dollars = rates[1] * n_completion + (cached_rate or 0.0) * n_cached
    for tokens, rate in written:
        n_written = min(_checked_tokens("written tokens", tokens), fresh)
        fresh -= n_written
        dollars += rate * n_written
    return (dollars + rates[0] * fresh) / 1000


def _detail(usage: Any, group: str, name: str) -> int:
    details = getattr(usage, group, None)
    if details is None and isinstance(usage, Mapping):
        details = usage.get(group)
    value = details.get(name) if isinstance(details, Mapping) else getattr(details, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def cache_write_tokens(usage: Any) -> tuple[int, int]:
    """(all, 1-hour) prompt tokens a chat response's ``usage`` says were written to the prompt
    cache (``prompt_tokens_details.cache_creation_tokens`` and ``cache_creation_1h_tokens``,
    parley's names for Anthropic's counts; 0 when not reported)."""
    return (
        _detail(usage, "prompt_tokens_details", "cache_creation_tokens"),
        _detail(usage, "prompt_tokens_details", "cache_creation_1h_tokens"),
    )


def reasoning_tokens(usage: Any) -> int:
    """The completion tokens a response's ``usage`` says were reasoning
    (``completion_tokens_details.reasoning_tokens``; 0 when not reported)."""
    return _detail(usage, "completion_tokens_details", "reasoning_tokens")


def cached_prompt_tokens(usage: Any) -> int:
    """The prompt tokens a chat response's ``usage`` says were read from the prompt cache
    (``prompt_tokens_details.cached_tokens``; 0 when not reported)."""
    return _detail(usage, "prompt_tokens_details", "cached_tokens")


def _warn_unknown_model(model: str | None) -> None:
    with _warned_lock:
        if model in _warned_models:
            return
        _warned_models.add(model)
    logger.warning(
        "Model %r is not in parley's price table, so its cost counts as 0. Add "
        '"price": [prompt_price_per_1k, completion_price_per_1k] to its config entry to price it.',
        model,
    )


def _count(key: str, value: object) -> float | int:
    if value is None:
        return 0
    if not _is_number(value):
        raise ValueError(f"usage[{key!r}] must be a number, got {value!r}")
    return value  # type: ignore[return-value]


def update_usage_summary(
    summary: Mapping[str, Any] | None, usage: Mapping[str, Any]
) -> dict[str, Any] | None:
    """A new summary with one response's ``usage`` added; the argument is left untouched.

    ``usage`` needs all of ``USAGE_KEYS``; if one is missing the call isn't counted and the
    summary comes back as it was (a copy, or ``None``).
    """
    result: dict[str, Any] | None = None
    if summary is not None:
        result = {k: dict(v) if isinstance(v, Mapping) else v for k, v in summary.items()}
    if any(key not in usage for key in USAGE_KEYS):
        return result
    added = {key: _count(key, usage[key]) for key in _COUNT_KEYS}
    model = usage["model"]
    if result is None:
        result = {"total_cost": 0}
    result["total_cost"] = result.get("total_cost", 0) + added["cost"]
    per_model = result.get(model, {})
    entry = {key: per_model.get(key, 0) + added[key] for key in _COUNT_KEYS}
    for key in DETAIL_KEYS:
        if key in per_model or usage.get(key):
            entry[key] = per_model.get(key, 0) + _count(key, usage.get(key))
    result[model] = entry
    return result


_MODES = ("actual", "total")


def _resolve_mode(mode: str | Sequence[str]) -> str:
    problem = f'Invalid mode: {mode!r}, choose from "actual", "total", ["actual", "total"]'
    if isinstance(mode, (list, tuple)):
        if not 1 <= len(mode) <= 2:
            raise ValueError(problem)
        chosen = [m for m in _MODES if m in mode]
        if not chosen:
            raise ValueError(problem)
        return "both" if len(chosen) == 2 else chosen[0]
    # AutoGen also takes the string "both" (its code checks it after mapping lists).
    if isinstance(mode, str) and mode in (*_MODES, "both"):
        return mode
    raise ValueError(problem)


def _section(summary: Mapping[str, Any] | None, kind: str) -> list[str]:
    if summary is None:
        return ["No actual cost incurred: every completion came from the cache."]
    word = "including" if kind == "total" else "excluding"
    lines = [
        f"Usage summary {word} cached usage:",
        f"Total cost: {round(summary.get('total_cost', 0), 5)}",
    ]
    for model, counts in summary.items():
        if model == "total_cost":
            continue
        lines.append(
            f"* Model {model!r}: cost: {round(counts['cost'], 5)}, "
            f"prompt_tokens: {counts['prompt_tokens']}, "
            f"completion_tokens: {counts['completion_tokens']}, "
            f"total_tokens: {counts['total_tokens']}"
        )
    return lines


def format_usage_summary(
    actual: Mapping[str, Any] | None,
    total: Mapping[str, Any] | None,
    mode: str | Sequence[str] = ("actual", "total"),
) -> str:
    """The text ``OpenAIWrapper.print_usage_summary`` prints (no trailing newline).

    ``mode`` is ``"actual"``, ``"total"`` or a list of one or two of them; anything else is a
    ``ValueError``, except that with no usage at all (``total is None``) mode isn't checked.
    """
    if total is None:
        return 'No usage summary yet: call "create" first.'
    resolved = _resolve_mode(mode)
    rule = "-" * 100
    lines = [rule]
    if resolved == "both":
        lines += _section(actual, "actual")
        lines.append("")
        if total != actual:
            lines += _section(total, "total")
        else:
            lines.append(
                "No completion came from the cache: total cost including cached usage equals "
                "the actual cost."
            )
    elif resolved == "total":
        lines += _section(total, "total")
    else:
        lines += _section(actual, "actual")
    lines.append(rule)
    return "\n".join(lines)


def usage_details(usage: Any) -> dict[str, int]:
    """The counts of ``DETAIL_KEYS`` a ChatCompletion's ``usage`` reports (those above 0)."""
    if usage is None:
        return {}
    counts = {
        "cached_tokens": cached_prompt_tokens(usage),
        "cache_creation_tokens": cache_write_tokens(usage)[0],
        "reasoning_tokens": reasoning_tokens(usage),
    }
    return {key: value for key, value in counts.items() if value}


def response_usage(response: Any) -> dict[str, Any]:
    """A ChatCompletion's usage with the keys in ``USAGE_KEYS`` (``ModelClient.get_usage``),
    and those of ``DETAIL_KEYS`` it reports."""
    usage = response.usage
    return {
        "prompt_tokens": usage.prompt_tokens if usage is not None else 0,
        "completion_tokens": (usage.completion_tokens or 0) if usage is not None else 0,
        "total_tokens": usage.total_tokens if usage is not None else 0,
        "cost": getattr(response, "cost", 0.0),
        "model": response.model,
        **usage_details(usage),
    }
