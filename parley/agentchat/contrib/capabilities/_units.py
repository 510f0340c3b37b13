"""A history as units: a tool call together with the results that answer it.

OpenAI rejects a request in which an assistant message with ``tool_calls`` is not followed by a
result for each call, or in which a tool result does not directly follow its call. A transform
that drops messages one by one can break that pairing (AutoGen 0.2's limiters did); parley's
transforms keep or drop whole *units* instead:

- a **call unit**: an assistant message with ``tool_calls`` and the tool results right after it
  that answer its calls — in parley's stored form one ``{"role": "tool", "tool_responses":
  [...]}`` message, in the request form one ``{"role": "tool", "tool_call_id": ...}`` message
  per call — or a legacy ``function_call`` message and the ``{"role": "function"}`` message
  after it. A call whose results have not come yet (the newest message, about to be executed)
  is a call unit of one message;
- an **orphan**: a tool or function result that does not answer the call unit before it (a
  history already cut by someone else). Limiters count it and keep it where it is, as AutoGen
  0.2 kept it, but never let it open what they keep (:func:`drop_opening_orphans`): a request
  must not start with a result;
- a **plain unit**: any other single message.

What counts as a tool result and which ids a message calls or answers is decided by the
helpers of :mod:`parley.agentchat._group_history`, shared with group chats.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..._group_history import call_ids, is_tool_result, result_ids

__all__ = [
    "Unit",
    "drop_opening_orphans",
    "first_unit",
    "is_call",
    "is_result",
    "units",
    "units_newest_first",
]


class Unit:
    """``messages[start:stop]``; ``orphan``: a result without its call."""

    # A plain slotted class: limiters build one per message they look at, and a frozen
    # dataclass costs several times more to create.
    __slots__ = ("orphan", "start", "stop")

    def __init__(self, start: int, stop: int, orphan: bool = False) -> None:
        self.start = start
        self.stop = stop
        self.orphan = orphan

    def __len__(self) -> int:
        return self.stop - self.start

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Unit):
            return NotImplemented
        return (self.start, self.stop, self.orphan) == (other.start, other.stop, other.orphan)

    def __hash__(self) -> int:
        return hash((self.start, self.stop, self.orphan))

    def __repr__(self) -> str:
        return f"Unit({self.start}, {self.stop}, orphan={self.orphan})"


def is_call(message: Mapping[str, Any]) -> bool:
    """An assistant message asking for tool or function calls."""
    return bool(message.get("tool_calls") or message.get("function_call"))


def is_result(message: Mapping[str, Any]) -> bool:
    """A tool result (either form) or a legacy function result."""
    return is_tool_result(message) or message.get("role") == "function"


def _answered_until(messages: Sequence[Mapping[str, Any]], call: int, stop: int) -> int:
    """The end (exclusive) of the results after ``messages[call]`` that answer it."""
    i = call + 1
    if not messages[call].get("tool_calls"):
        # A legacy function_call is answered by the one function message after it.
        return i + 1 if i < stop and messages[i].get("role") == "function" else i
    pending = set(call_ids(messages[call]))
    while i < stop and is_tool_result(messages[i]):
        ids = result_ids(messages[i])
        if not ids or len(set(ids)) != len(ids) or not pending.issuperset(ids):
            break
        pending.difference_update(ids)
        i += 1
    return i


def units_newest_first(messages: Sequence[Mapping[str, Any]]) -> Iterator[Unit]:
    """The units of ``messages`` from the newest back, looking only as far as the caller reads
    (a limiter that keeps the last few units never parses the rest of a long history)."""
    j = len(messages)
    while j > 0:
        r = j
        while r > 0 and is_result(messages[r - 1]):
            r -= 1
        if r == j:  # messages[j - 1] is not a result: a plain unit or an unanswered call
            yield Unit(j - 1, j)
            j -= 1
            continue
        call = r - 1
        has_call = call >= 0 and is_call(messages[call])
        answered = _answered_until(messages, call, j) if has_call else r
        for i in range(j - 1, answered - 1, -1):
            yield Unit(i, i + 1, orphan=True)
        if has_call:
            yield Unit(call, answered)
            j = call
        else:
            j = r


def first_unit(messages: Sequence[Mapping[str, Any]]) -> Unit:
    """The unit that starts the (non-empty) history."""
    first = messages[0]
    if is_result(first):
        return Unit(0, 1, orphan=True)
    if is_call(first):
        return Unit(0, _answered_until(messages, 0, len(messages)))
    return Unit(0, 1)


def units(messages: Sequence[Mapping[str, Any]]) -> list[Unit]:
    """Every unit of ``messages``, oldest first."""
    found = list(units_newest_first(messages))
    found.reverse()
    return found


def drop_opening_orphans(messages: Sequence[Mapping[str, Any]], kept: list[Unit]) -> list[Unit]:
    """``kept`` (units of ``messages``, oldest first) without the orphans that would open the
    window: an orphan stays only right after the message it follows in ``messages``, with a
    non-system message kept before it. So none comes first, after nothing but system messages,
    or after a gap (the newest part that follows a kept first message, say)."""
    out: list[Unit] = []
    anchored = False  # a non-system message is kept, and the last kept unit ends where this starts
    for unit in kept:
        contiguous = bool(out) and out[-1].stop == unit.start
        if unit.orphan and not (contiguous and anchored):
            continue
        out.append(unit)
        anchored = anchored or any(
            messages[i].get("role") != "system" for i in range(unit.start, unit.stop)
        )
    return out
