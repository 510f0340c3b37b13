"""Histories with tool calls for the transform tests: builders, a hypothesis strategy that knows
where each unit starts, and checks written independently of parley's own unit parser."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from parley.agentchat.contrib.capabilities.transforms_util import count_text_tokens


def user(content: Any, name: str = "user") -> dict[str, Any]:
    return {"role": "user", "content": content, "name": name}


def assistant(content: Any, name: str = "assistant") -> dict[str, Any]:
    return {"role": "assistant", "content": content, "name": name}


def call(*ids: str, content: Any = None) -> dict[str, Any]:
    """An assistant message asking for one tool call per id."""
    calls = [
        {
            "id": i,
            "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps({"q": i})},
        }
        for i in ids
    ]
    return {"role": "assistant", "content": content, "tool_calls": calls, "name": "assistant"}


def result(call_id: str, content: str) -> dict[str, Any]:
    """One tool result, as a request carries it."""
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def stored(*answers: tuple[str, str]) -> dict[str, Any]:
    """The tool results of one call message, as parley stores them."""
    responses = [{"role": "tool", "tool_call_id": i, "content": c} for i, c in answers]
    return {
        "role": "tool",
        "tool_responses": responses,
        "content": "\n\n".join(c for _, c in answers),
        "name": "executor",
    }


def function_call(name: str = "lookup") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "function_call": {"name": name, "arguments": "{}"},
        "name": "assistant",
    }


def function_result(content: str, name: str = "lookup") -> dict[str, Any]:
    return {"role": "function", "name": name, "content": content}


# -- checks ------------------------------------------------------------------------------------


def request_form(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The messages as a request carries them: stored tool results expanded."""
    out: list[Mapping[str, Any]] = []
    for m in messages:
        responses = m.get("tool_responses")
        if responses:
            out.extend(responses)
            if m.get("role") == "tool":
                continue
        out.append(m)
    return out


def pairing_errors(
    messages: Sequence[Mapping[str, Any]], *, pending_last: bool = False
) -> list[str]:
    """What OpenAI would refuse about tool calls and results (an unanswered call is fine as the
    last message when ``pending_last``)."""
    errors = []
    flat = request_form(messages)
    waiting: set[str] = set()
    function_waiting = False
    for i, m in enumerate(flat):
        role = m.get("role")
        if role == "tool":
            if m.get("tool_call_id") not in waiting:
                errors.append(f"[{i}] result {m.get('tool_call_id')} without its call")
            waiting.discard(str(m.get("tool_call_id")))
            continue
        if role == "function":
            if not function_waiting:
                errors.append(f"[{i}] function result without its call")
            function_waiting = False
            continue
        if waiting:
            errors.append(f"[{i}] calls {sorted(waiting)} not answered")
        waiting = {tc["id"] for tc in m.get("tool_calls") or ()}
        function_waiting = bool(m.get("function_call"))
    last_is_call = bool(flat) and bool(flat[-1].get("tool_calls") or flat[-1].get("function_call"))
    if (waiting or function_waiting) and not (pending_last and last_is_call):
        errors.append("the last call is not answered")
    return errors


def sent_tokens(message: Mapping[str, Any]) -> list[int]:
    """Text tokens of each text of ``message`` that reaches the model."""
    responses = message.get("tool_responses")
    if responses:
        counts = [count_text_tokens(r.get("content")) for r in responses]
        return (
            counts
            if message.get("role") == "tool"
            else [*counts, count_text_tokens(message.get("content"))]
        )
    return [count_text_tokens(message.get("content"))]


def identity(message: Mapping[str, Any]) -> tuple[Any, ...]:
    """What no transform may change about a message (everything but its text)."""
    responses = message.get("tool_responses") or ()
    return (
        message.get("role"),
        json.dumps(message.get("tool_calls"), sort_keys=True),
        message.get("tool_call_id"),
        json.dumps(message.get("function_call"), sort_keys=True),
        tuple(r.get("tool_call_id") for r in responses),
    )


# -- a strategy ------------------------------------------------------------------------------------

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "the",
    "quick",
    "brown",
    "fox",
    "42",
    "é",
    "日本",
    "🙂",
    "\n",
]
texts = st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join)


def _content(draw: Any, images: bool = True) -> Any:
    kind = draw(st.sampled_from(["text", "text", "text", "list", "empty"]))
    if kind == "list":
        parts: list[Any] = [{"type": "text", "text": draw(texts)}]
        if images and draw(st.booleans()):
            parts.append({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}})
        if draw(st.booleans()):
            parts.append({"type": "text", "text": draw(texts)})
        return parts
    return "" if kind == "empty" else draw(texts)


@dataclass
class History:
    """A generated history and where its units are (``units``: (start, stop), orphans not
    included); ``orphans``: indices of results without their call; ``pending``: the last
    message is a call about to be executed."""

    messages: list[dict[str, Any]]
    units: list[tuple[int, int]] = field(default_factory=list)
    orphans: list[int] = field(default_factory=list)
    pending: bool = False


@st.composite
def histories(
    draw: Any, *, orphans: bool = False, pending: bool = True, system: bool = True
) -> History:
    h = History([])
    ids = iter(f"call_{n}" for n in range(10_000))

    def add(*messages: dict[str, Any], orphan: bool = False) -> None:
        start = len(h.messages)
        # "_seq" tells the tests where a transformed message came from (requests drop the key).
        h.messages.extend({**m, "_seq": start + k} for k, m in enumerate(messages))
        if orphan:
            h.orphans.extend(range(start, len(h.messages)))
        else:
            h.units.append((start, len(h.messages)))

    if system and draw(st.booleans()):
        add({"role": "system", "content": draw(texts)})
    if orphans and draw(st.booleans()):
        add(result("lost", draw(texts)), orphan=True)
        if draw(st.booleans()):
            add(stored(("lost2", draw(texts))), orphan=True)
    kinds = st.sampled_from(["user", "assistant", "request", "stored", "function", "system"])
    for kind in draw(st.lists(kinds, max_size=14)):
        if kind == "user":
            add(user(_content(draw)))
        elif kind == "assistant":
            # OpenAI (and the strict fake server) take images in user messages only.
            add(assistant(_content(draw, images=False)))
        elif kind == "system":
            add({"role": "system", "content": draw(texts)})
        elif kind == "function":
            add(function_call(), function_result(draw(texts)))
        else:
            n = draw(st.integers(1, 3))
            call_ids = [next(ids) for _ in range(n)]
            text = draw(st.one_of(st.none(), texts))
            answers = [(i, draw(texts)) for i in call_ids]
            if kind == "request":
                add(call(*call_ids, content=text), *(result(i, c) for i, c in answers))
            else:
                add(call(*call_ids, content=text), stored(*answers))
    if pending and draw(st.booleans()):
        add(call(next(ids), content=draw(st.one_of(st.none(), texts))))
        h.pending = True
    return h


def kept_indices(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]
) -> list[int]:
    """The index in ``before`` of each message of ``after``; fails unless ``after`` is an
    ordered subsequence of ``before`` whose messages changed in nothing but their text."""
    out = [m["_seq"] for m in after]
    assert out == sorted(set(out)), f"reordered or repeated: {out}"
    for i, m in zip(out, after, strict=True):
        assert identity(before[i]) == identity(m), f"{m!r} changed more than its text"
    return out


def check_whole_units(h: History, kept: list[int]) -> None:
    """``kept`` is a union of whole units and holds no orphan."""
    chosen = set(kept)
    assert not chosen & set(h.orphans), "a result without its call was kept"
    for start, stop in h.units:
        part = chosen & set(range(start, stop))
        assert not part or len(part) == stop - start, (
            f"unit {start}:{stop} was split: kept {sorted(part)}"
        )
