"""Keep tool calls and their results together when a history is cut, filtered or reloaded.

OpenAI rejects a request in which an assistant message with ``tool_calls`` is not followed by
a result for each call, or in which a tool result does not follow its call (AutoGen #3164).
A group transcript kept to its last N messages, a selector history passed through message
transforms, or a saved chat loaded by ``resume`` can each break that pairing; these helpers
restore it without touching the caller's dicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

__all__ = ["call_ids", "is_tool_result", "pair_tool_calls", "result_ids", "tail"]

# A transcript's messages (a GroupChat's dicts, a saved chat's, a typed history) come back as
# they went in; a message that had to be repaired is a new dict of the same shape.
M = TypeVar("M", bound=Mapping[str, Any])


def is_tool_result(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "tool" or bool(message.get("tool_responses"))


def call_ids(message: Mapping[str, Any]) -> list[str]:
    return [str(tc.get("id")) for tc in message.get("tool_calls") or () if isinstance(tc, Mapping)]


def result_ids(message: Mapping[str, Any]) -> list[str]:
    """The tool call ids a message answers (a bundled ``tool_responses`` or a single result)."""
    responses = message.get("tool_responses")
    if responses:
        return [str(r.get("tool_call_id")) for r in responses if isinstance(r, Mapping)]
    if message.get("role") == "tool":
        return [str(message.get("tool_call_id"))]
    return []


def tail(messages: Sequence[M], n: int) -> list[M]:
    """The last ``n`` messages, plus as many earlier ones as needed so that the kept part does
    not start with results whose call was cut off."""
    if n <= 0:
        return []
    start = max(len(messages) - n, 0)
    while 0 < start < len(messages) and is_tool_result(messages[start]):
        start -= 1
    return list(messages[start:])


def _as_text(message: M, drop: tuple[str, ...]) -> M:
    out = {k: v for k, v in message.items() if k not in drop}
    if out.get("role") == "tool":
        out["role"] = "user"
    if out.get("content") is None:
        out["content"] = ""
    # Keys dropped, a tool role made "user", no content made "": still a message of its kind.
    return cast("M", out)


def pair_tool_calls(
    messages: Sequence[M], *, allow_pending_last: bool = False
) -> tuple[list[M], int]:
    """A copy of ``messages`` that an API accepts: every tool call answered right after it,
    every result right after its call.

    A call without its results loses ``tool_calls`` (its text is kept); a result without its
    call becomes a plain message with its text. ``allow_pending_last`` leaves a call in the
    last message alone (it is about to be executed). Returns the messages and how many were
    changed; unchanged messages are shared, not copied.
    """
    out: list[M] = []
    changed = 0
    pending: set[str] = set()
    for i, m in enumerate(messages):
        if is_tool_result(m):
            ids = result_ids(m)
            if ids and all(i_ in pending for i_ in ids):
                pending.difference_update(ids)
                out.append(m)
            else:
                out.append(_as_text(m, ("tool_responses", "tool_call_id")))
                changed += 1
            continue
        if pending:
            # The previous call was not fully answered: drop its calls (already in ``out``).
            changed += _blank_last_call(out)
            pending = set()
        ids = call_ids(m)
        if ids:
            last = i == len(messages) - 1
            if last and allow_pending_last:
                out.append(m)
                continue
            pending = set(ids)
        out.append(m)
    if pending:
        changed += _blank_last_call(out)
    return out, changed


def _blank_last_call(out: list[M]) -> int:
    for j in range(len(out) - 1, -1, -1):
        if out[j].get("tool_calls"):
            # Results that did answer some of its calls must go too.
            k = j + 1
            while k < len(out) and out[k].get("role") == "tool":
                out[k] = _as_text(out[k], ("tool_responses", "tool_call_id"))
                k += 1
            out[j] = _as_text(out[j], ("tool_calls",))
            return 1
    return 0
