"""The checks ``Completion.tune`` makes before it spends anything, and the input-token estimates
its budget rules start from.

AutoGen found most mistakes late (a missing price as a ``TypeError`` deep in the cost arithmetic,
a template key as a ``KeyError`` in the middle of tuning, after paying for earlier trials);
these checks name the problem up front instead.
"""

from __future__ import annotations

import math
import numbers
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...token_count_utils import count_token
from .. import _templating
from ._tune_space import SearchProblem, served_by

__all__ = [
    "check_arguments",
    "check_inference_budget",
    "check_prices",
    "check_templates",
    "estimate_input_tokens",
]

# Estimates use one tokenizer for every model: they only steer pruning until the first trial
# of a template has measured the real counts.
_ESTIMATE_MODEL = "gpt-4"
_CHAT_OVERHEAD = 3  # tokens that prime the reply of a chat request
_MESSAGE_OVERHEAD = 4  # tokens around each chat message


def _budget(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number of USD, got {value!r}")
    amount = float(value)
    if not amount > 0:  # NaN too
        raise ValueError(
            f"{name}={value!r} cannot pay for a single request; give a positive USD amount"
        )
    return amount


def check_arguments(
    data: Any,
    metric: Any,
    mode: Any,
    eval_func: Any,
    *,
    inference_budget: Any,
    optimization_budget: Any,
    num_samples: Any,
    search_seed: Any,
    max_concurrency: Any,
) -> tuple[list[Mapping[str, Any]], float | None, float | None]:
    """``(data as a list, inference_budget, optimization_budget)``, or TypeError / ValueError
    naming what is wrong with the arguments."""
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Sequence):
        raise TypeError(f"data must be a list of dicts, got {type(data).__name__}")
    if not data:
        raise ValueError("tune() needs at least one data instance, got an empty data set")
    for i, instance in enumerate(data):
        if not isinstance(instance, Mapping):
            raise TypeError(f"data[{i}] must be a dict, got {type(instance).__name__}")
    if not isinstance(metric, str) or not metric:
        raise TypeError(f"metric must be the name of one of eval_func's metrics, got {metric!r}")
    if mode not in ("min", "max"):
        raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
    if not callable(eval_func):
        raise TypeError(
            f"eval_func must be a callable eval_func(responses, **data_instance), got {eval_func!r}"
        )
    inference = _budget(inference_budget, "inference_budget")
    optimization = _budget(optimization_budget, "optimization_budget")
    if isinstance(num_samples, bool) or not isinstance(num_samples, int):
        raise TypeError(f"num_samples must be an int, got {num_samples!r}")
    if num_samples == 0 or num_samples < -1:
        raise ValueError(
            f"num_samples must be positive, or -1 for 'until the budget is spent'; got {num_samples}"
        )
    if num_samples == -1 and optimization is None:
        raise ValueError(
            "num_samples=-1 (tune until the budget is spent) needs an optimization_budget"
        )
    if isinstance(search_seed, bool) or not isinstance(search_seed, int):
        raise TypeError(f"search_seed must be an int, got {search_seed!r}")
    if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
        raise TypeError(f"max_concurrency must be an int, got {max_concurrency!r}")
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
    return list(data), inference, optimization


def check_prices(
    price_of: Callable[[str, Any], Any],
    class_name: str,
    models: Sequence[str],
    price: Any,
    config_list: list[dict[str, Any]] | None = None,
) -> None:
    """ValueError naming the first model without a price (budgets are kept in USD): a price
    given to tune, carried by the config-list entry that serves the model, or known by name."""
    for tuned in models:
        unpriced = [m for m, p in served_by(tuned, price, config_list) if price_of(m, p) is None]
        if unpriced:
            model = unpriced[0]
            raise ValueError(
                f"no price is known for model {model!r}, and tune needs one to keep within its "
                f"budgets: pass price=[input, output] (USD per 1000 tokens) to tune or in the "
                f"model's config_list entry, or set "
                f"{class_name}.price1K[{model!r}] = (input, output)"
            )


def _field_names(template: str) -> list[str]:
    names = []
    for _, name, _, _ in string.Formatter().parse(template):
        if name is None:
            continue
        root = name.split(".", 1)[0].split("[", 1)[0]
        if root == "" or root.isdigit():
            raise ValueError(
                f"template {template[:80]!r} has a positional field {{{name}}}; templates are "
                "filled from each data instance by name, e.g. {question}"
            )
        names.append(root)
    return names


def _str_templates(problem: SearchProblem) -> list[tuple[str, str]]:
    found = [("prompt", p) for p in problem.prompts or () if isinstance(p, str)]
    for conversation in problem.messages or ():
        found += [
            ("message", m["content"]) for m in conversation if isinstance(m.get("content"), str)
        ]
    return found


def check_templates(
    problem: SearchProblem, data: Sequence[Mapping[str, Any]], allow_format: bool
) -> None:
    """ValueError when a format-string template names a key some data instance lacks (only
    with ``allow_format_str_template``: otherwise strings are sent as they are)."""
    if not allow_format:
        return
    for kind, template in _str_templates(problem):
        names = _field_names(template)
        for i, instance in enumerate(data):
            missing = [n for n in names if n not in instance]
            if missing:
                raise ValueError(
                    f"{kind} template {template[:80]!r} names {missing[0]!r}, which data[{i}] "
                    f"lacks (its keys: {sorted(instance)}); escape literal braces as {{{{ }}}}"
                )


def _text_tokens(content: Any) -> int:
    if content is None:
        return 0
    return count_token(content if isinstance(content, str) else str(content), _ESTIMATE_MODEL)


def _instance_tokens(
    problem: SearchProblem,
    index: int | None,
    instance: Mapping[str, Any],
    chat: bool,
    allow_format: bool,
) -> int:
    if problem.messages is not None and index is not None:
        filled = _templating.instantiate_messages(problem.messages[index], instance, allow_format)
        tokens = sum(_MESSAGE_OVERHEAD + _text_tokens(m.get("content")) for m in filled)
        return tokens + _CHAT_OVERHEAD
    if problem.prompts is not None and index is not None:
        text = _templating.instantiate(problem.prompts[index], instance, allow_format)
        tokens = _text_tokens(text)
        return tokens + (_CHAT_OVERHEAD + _MESSAGE_OVERHEAD if chat else 0)
    return 0


def estimate_input_tokens(
    problem: SearchProblem,
    data: Sequence[Mapping[str, Any]],
    is_chat_model: Callable[[str], bool],
    allow_format: bool,
) -> dict[tuple[str, int | None], float]:
    """(model, template index) -> the mean prompt tokens of one request over ``data``."""
    templates = problem.prompts or problem.messages
    indices: list[int | None] = list(range(len(templates))) if templates else [None]
    estimates: dict[tuple[str, int | None], float] = {}
    per_kind: dict[tuple[bool, int | None], float] = {}
    for model in problem.models:
        chat = is_chat_model(model)
        for index in indices:
            if (chat, index) not in per_kind:
                tokens = [_instance_tokens(problem, index, d, chat, allow_format) for d in data]
                per_kind[(chat, index)] = math.fsum(tokens) / len(tokens)
            estimates[(model, index)] = per_kind[(chat, index)]
    return estimates


def check_inference_budget(
    inference_budget: float,
    estimates: Mapping[tuple[str, int | None], float],
    price: Callable[[str], tuple[float, float]],
) -> None:
    """ValueError when even the cheapest model and template cost the whole budget in input."""
    costs = {key: tokens * price(key[0])[0] / 1000 for key, tokens in estimates.items()}
    (model, _), cheapest = min(costs.items(), key=lambda item: item[1])
    if cheapest >= inference_budget:
        raise ValueError(
            f"inference_budget={inference_budget} USD cannot buy one request: the cheapest "
            f"choice ({model!r} with its shortest prompt) costs about {cheapest:.6f} USD of "
            "input per data instance (estimated from the data's token counts)"
        )
