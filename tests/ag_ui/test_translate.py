"""The translation table, event by event: parley's events (the public models of
``parley.events``) in, AG-UI's events out, each a valid model of the protocol's package and the
whole in the order the protocol requires."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("ag_ui.core")

from ag_ui.core import (
    AssistantMessage,
    BaseEvent,
    EventType,
    RunFinishedEvent,
    RunStartedEvent,
    ToolMessage,
    UserMessage,
)

from parley import events as pe
from parley.ag_ui._translate import Translator

from ._client import ProtocolError, verify

CHAT = "chat-1"


def _run(translator: Translator, *events: pe.BaseEvent) -> list[BaseEvent]:
    out: list[BaseEvent] = [RunStartedEvent(thread_id="t", run_id="r")]
    for event in events:
        out.extend(translator.translate(event))
    out.extend(translator.close_open())
    out.append(RunFinishedEvent(thread_id="t", run_id="r"))
    verify(out)
    return out[1:-1]


def _opening() -> list[pe.BaseEvent]:
    return [
        pe.ChatStartEvent(chat_id=CHAT, sender="user", recipient="assistant", message="Hi"),
        pe.TextEvent(chat_id=CHAT, sender="user", recipient="assistant", content="Hi"),
    ]


def _types(events: list[BaseEvent]) -> list[str]:
    return [e.type.value for e in events]


def test_a_message_is_a_text_message_and_the_opening_is_not_repeated() -> None:
    t = Translator("user", [])
    out = _run(
        t,
        *_opening(),
        pe.TextEvent(
            chat_id=CHAT, sender="assistant", recipient="user", content="Hello!", message_id="m1"
        ),
    )
    assert _types(out) == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
    start, content, _ = out
    assert start.message_id == "m1"
    assert start.role == "assistant"
    assert start.name == "assistant"
    assert content.delta == "Hello!"
    assert t.messages == [AssistantMessage(id="m1", content="Hello!", name="assistant")]
    assert t.state["lastSpeaker"] == "assistant"


def test_streamed_deltas_reassemble_into_the_message_they_end() -> None:
    t = Translator("user", [])
    pieces = ["Hel", "", "lo", " there"]
    out = _run(
        t,
        *_opening(),
        *(pe.StreamEvent(content=p, agent="assistant", message_id="m1") for p in pieces),
        pe.TextEvent(
            chat_id=CHAT,
            sender="assistant",
            recipient="user",
            content="Hello there",
            message_id="m1",
        ),
    )
    assert _types(out) == ["TEXT_MESSAGE_START"] + ["TEXT_MESSAGE_CONTENT"] * 3 + [
        "TEXT_MESSAGE_END"
    ]
    assert "".join(e.delta for e in out[1:-1]) == "Hello there"
    assert {e.message_id for e in out} == {"m1"}


def test_a_stream_that_starts_again_ends_the_broken_message() -> None:
    t = Translator("user", [])
    out = _run(
        t,
        *_opening(),
        pe.StreamEvent(content="Hel", agent="assistant", message_id="m1"),
        pe.StreamEvent(content="", agent="assistant", message_id="m1", reset=True),
        pe.StreamEvent(content="Hello", agent="assistant", message_id="m1"),
        pe.TextEvent(
            chat_id=CHAT, sender="assistant", recipient="user", content="Hello", message_id="m1"
        ),
    )
    ends = [e.message_id for e in out if e.type == EventType.TEXT_MESSAGE_END]
    assert ends == ["m1", "m1:1"]
    assert t.messages == [AssistantMessage(id="m1:1", content="Hello", name="assistant")]


def test_tool_calls_and_their_results() -> None:
    t = Translator("user", [])
    call = pe.ToolCall(id="c1", function=pe.FunctionCall(name="add", arguments='{"a": 1}'))
    out = _run(
        t,
        *_opening(),
        pe.ToolCallEvent(
            chat_id=CHAT,
            sender="assistant",
            recipient="user",
            content="Adding.",
            tool_calls=[call],
            message_id="m1",
        ),
        pe.ToolResponseEvent(
            chat_id=CHAT,
            sender="user",
            recipient="assistant",
            content="2",
            tool_responses=[pe.ToolResponse(tool_call_id="c1", content="2")],
        ),
    )
    assert _types(out) == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
    ]
    start = out[3]
    assert (start.tool_call_id, start.tool_call_name, start.parent_message_id) == (
        "c1",
        "add",
        "m1",
    )
    assert json.loads(out[4].delta) == {"a": 1}
    result = out[6]
    assert (result.tool_call_id, result.content) == ("c1", "2")
    assistant, tool = t.messages
    assert isinstance(assistant, AssistantMessage)
    assert assistant.tool_calls is not None
    assert assistant.tool_calls[0].function.arguments == '{"a": 1}'
    assert isinstance(tool, ToolMessage)
    assert tool.tool_call_id == "c1"


def test_a_legacy_function_call_gets_an_id_its_response_answers() -> None:
    t = Translator("user", [])
    out = _run(
        t,
        *_opening(),
        pe.FunctionCallEvent(
            chat_id=CHAT,
            sender="assistant",
            recipient="user",
            function_call=pe.FunctionCall(name="add", arguments="{}"),
        ),
        pe.FunctionResponseEvent(
            chat_id=CHAT, sender="user", recipient="assistant", name="add", content="0"
        ),
    )
    assert _types(out) == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"]
    assert out[0].tool_call_id == out[3].tool_call_id


def test_the_human_side_speaks_as_the_user() -> None:
    t = Translator("user", [UserMessage(id="u0", content="Hi")])
    _run(
        t,
        *_opening(),
        pe.TextEvent(chat_id=CHAT, sender="assistant", recipient="user", content="Go on?"),
        pe.TextEvent(chat_id=CHAT, sender="user", recipient="assistant", content="Yes."),
        pe.TextEvent(chat_id=CHAT, sender="user", recipient="assistant", content=""),
    )
    roles = [(m.role, getattr(m, "content", None)) for m in t.messages]
    assert roles == [("user", "Hi"), ("assistant", "Go on?"), ("user", "Yes.")]


def test_a_message_relayed_twice_is_shown_once() -> None:
    t = Translator(None, [])
    relayed = [
        pe.TextEvent(chat_id=CHAT, sender="a", recipient=r, content="x", message_id="m9")
        for r in ("manager", "b", "c")
    ]
    out = _run(t, *_opening(), *relayed)
    assert _types(out) == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]


def test_usage_is_summed_per_model_and_taken_once() -> None:
    t = Translator("user", [])
    for n in (1, 2):
        _run(
            t,
            pe.UsageEvent(
                model="m", prompt_tokens=n, completion_tokens=1, total_tokens=n + 1, total_cost=n
            ),
        )
    _run(t, pe.UsageEvent(model="m", prompt_tokens=50, cached=True))
    (usage,) = t.take_usage() or []
    assert (usage.model, usage.input_tokens, usage.output_tokens, usage.total_tokens) == (
        "m",
        3,
        2,
        5,
    )
    assert t.take_usage() is None
    assert t.state["cost"] == 2


def test_an_error_ends_what_is_open_then_fails_the_run() -> None:
    t = Translator("user", [])
    out: list[Any] = [RunStartedEvent(thread_id="t", run_id="r")]
    for event in (
        *_opening(),
        pe.StreamEvent(content="Hel", agent="assistant", message_id="m1"),
        pe.ErrorEvent(error="boom", error_type="APIError"),
    ):
        out.extend(t.translate(event))
    verify(out)
    assert _types(out)[-2:] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert out[-1].code == "APIError"
    assert "boom" in out[-1].message


def test_the_verifier_catches_what_it_should() -> None:
    t = Translator("user", [])
    events: list[Any] = [RunStartedEvent(thread_id="t", run_id="r")]
    events.extend(t.translate(pe.StreamEvent(content="x", agent="a", message_id="m")))
    events.append(RunFinishedEvent(thread_id="t", run_id="r"))
    with pytest.raises(ProtocolError, match="still open"):
        verify(events)
