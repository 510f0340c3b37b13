"""A model call in a durable chat: its response replayed from the journal, or asked for and
committed there (see :mod:`parley._core.journal`).

A call is keyed by the agent it is charged to and its purpose (a reply, a summary, a tool's
own call), and by how many such calls came before. The record keeps the response as the
cache stores it (``_cache_io``'s document), with the config that made it, its cost, whether
the cache answered and whether the filter passed it: a replayed call is presented exactly as
the live one was (``Fallback.replay``), so usage totals and ``ChatResult.cost`` match, and
listeners (the logger, the tracer) see it as an ``llm_call`` step with ``replayed=True``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._core import journal as _journal
from ..exceptions import DurableChatError
from ..usage import _run as _usage
from ._cache_io import Unstorable, decode_response, encode_response
from ._layers import Outcome

__all__ = ["replayed_or_asked"]


async def replayed_or_asked(fallback: Any, config: Mapping[str, Any]) -> Any:
    """``fallback(config)``'s response, from the current journal when it holds it."""
    agent, purpose = _usage.charged_to(config.get("agent"))
    seen: list[Outcome] = []

    async def ask() -> Any:
        return await fallback.ask(config, seen)

    def decode(record: Any) -> Any:
        _check_record(record)
        response = decode_response(record["response"])
        if response is None:
            raise ValueError(f"the journal's response of {agent}'s call cannot be read")
        _check_choices(response)
        outcome = Outcome(response, record["cost"], record["cached"])
        return fallback.replay(config, record["config"], outcome, record["passed"])

    def encode(response: Any) -> dict[str, Any]:
        return _encode(response, bool(seen) and seen[-1].cached)

    return await _journal.journaled("llm", agent, ask, ident=purpose, encode=encode, decode=decode)


def _check_record(record: Any) -> None:
    """A model call's record as ``_encode`` makes it (``journaled`` names the step when not)."""
    if not isinstance(record, dict) or not isinstance(record.get("response"), dict):
        raise TypeError(f"a model call's record is an object with a response, got {record!r:.80}")
    cost = record.get("cost")
    if not isinstance(record.get("cached"), bool) or not isinstance(record.get("passed"), bool):
        raise TypeError("a model call's record has boolean 'cached' and 'passed'")
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, (int, float))):
        raise TypeError(f"a model call's cost is a number, got {cost!r:.80}")
    if isinstance(record.get("config"), bool) or not isinstance(record.get("config"), int):
        raise TypeError("a model call's record has an integer 'config'")


def _check_choices(response: Any) -> None:
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not all(
        hasattr(c, "message") or hasattr(c, "text") for c in choices
    ):
        raise TypeError(
            f"the recorded response's choices are not a list of choices: {choices!r:.80}"
        )


def _encode(response: Any, cached: bool) -> dict[str, Any]:
    try:
        document = encode_response(response)
    except Unstorable as e:
        raise DurableChatError(f"a durable chat cannot record {e}") from e
    return {
        "response": document,
        "config": getattr(response, "config_id", 0),
        "passed": getattr(response, "pass_filter", True),
        "cost": getattr(response, "cost", None),
        "cached": cached,
    }
