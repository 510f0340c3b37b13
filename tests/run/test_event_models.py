"""The event models themselves (``parley.events``): every kind round-trips through JSON and
``parse_event`` whatever its payload; AG2's ways of making and reading them work; an input
request not received from a run refuses an answer clearly."""

from __future__ import annotations

import json
import types
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from parley.events import (
    EVENT_CLASSES,
    BaseEvent,
    ExecutedFunctionEvent,
    InputRequestEvent,
    TextEvent,
    ToolCallEvent,
    parse_event,
)
from parley.exceptions import InputRequestError

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


def values(annotation: Any) -> st.SearchStrategy[Any]:
    """Valid JSON-side values for a field of type ``annotation``."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is Any:
        return JSON
    if origin in (typing.Union, types.UnionType):
        return st.one_of([values(a) for a in args])
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin is list:
        return st.lists(values(args[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(), values(args[1]), max_size=3)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return payloads(annotation)
    simple: dict[Any, st.SearchStrategy[Any]] = {
        type(None): st.none(),
        str: st.text(),
        bool: st.booleans(),
        int: st.integers(),
        float: st.floats(allow_nan=False, allow_infinity=False),
    }
    if annotation in simple:
        return simple[annotation]
    if str(annotation) == "<class 'uuid.UUID'>":
        return st.uuids().map(str)
    raise AssertionError(f"no strategy for {annotation!r}")


def payloads(model: type[BaseModel]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {name: values(info.annotation) for name, info in model.model_fields.items()}
    )


def events() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        [
            payloads(cls.content_class).map(lambda content, kind=kind: {"type": kind, "content": content})
            for kind, cls in EVENT_CLASSES.items()
        ]
    )


@settings(max_examples=300, deadline=None)
@given(events())
def test_every_kind_round_trips_through_json(data: dict[str, Any]) -> None:
    event = parse_event(data)
    assert event.type == data["type"] and type(event) is EVENT_CLASSES[data["type"]]
    dumped = event.model_dump(mode="json")
    assert parse_event(json.dumps(dumped)).model_dump(mode="json") == dumped
    assert parse_event(dumped) == parse_event(dumped)


def test_each_kind_has_a_distinct_stable_type_name() -> None:
    assert sorted(EVENT_CLASSES) == sorted(
        [
            "chat_end",
            "chat_start",
            "error",
            "execute_code_block",
            "execute_function",
            "executed_code_block",
            "executed_function",
            "function_call",
            "function_response",
            "group_chat_run_chat",
            "input_request",
            "input_response",
            "run_completion",
            "run_start",
            "stream",
            "termination",
            "text",
            "tool_call",
            "tool_response",
            "usage",
        ]
    )
    for kind, cls in EVENT_CLASSES.items():
        assert issubclass(cls, BaseEvent)
        assert cls.model_fields["type"].default == kind


def test_events_are_made_from_their_payloads_fields_as_in_ag2() -> None:
    text = TextEvent(sender="a", recipient="b", content="hi")
    assert (text.type, text.content.sender, text.content.content) == ("text", "a", "hi")
    parts = TextEvent(sender="a", recipient="b", content=[{"type": "text", "text": "hi"}])
    assert parts.content.content == [{"type": "text", "text": "hi"}]
    call = ToolCallEvent(
        sender="a",
        recipient="b",
        tool_calls=[{"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    )
    assert call.content.tool_calls[0].function.name == "f"
    assert parse_event(text.model_dump()).content.uuid == text.content.uuid
    built = TextEvent.build(sender="a", recipient="b", content="hi")
    assert built.model_dump(exclude={"content": {"uuid"}}) == text.model_dump(
        exclude={"content": {"uuid"}}
    )


def test_a_payload_that_does_not_fit_is_refused_by_name() -> None:
    with pytest.raises(ValidationError, match="tool_calls"):
        parse_event({"type": "tool_call", "content": {"sender": "a", "recipient": "b"}})
    with pytest.raises(ValidationError, match="no_such_kind"):
        parse_event({"type": "no_such_kind", "content": {}})


def test_an_input_request_not_from_a_run_cannot_be_answered() -> None:
    request = InputRequestEvent(prompt="name?", agent="user")
    with pytest.raises(InputRequestError, match="not come from a running run"):
        request.respond("x")
    with pytest.raises(InputRequestError):
        parse_event(request.model_dump(mode="json")).content.respond("x")  # type: ignore[attr-defined]
    answers: list[str] = []
    request.content.set_responder(answers.append)
    with pytest.raises(TypeError, match="text"):
        request.respond(3)  # type: ignore[arg-type]
    request.respond("Ada")
    assert answers == ["Ada"]
    assert "respond" not in request.model_dump()["content"]


def test_events_print_as_the_console_shows_a_chat(capsys: pytest.CaptureFixture[str]) -> None:
    TextEvent(sender="a", recipient="b", content="hello").print()
    ExecutedFunctionEvent(
        func_name="add", call_id="c1", arguments={"x": 1}, recipient="b", content="2"
    ).print()
    out = capsys.readouterr().out
    assert "a (to b):\n" in out and "hello" in out
    assert "EXECUTED FUNCTION add" in out and "Call ID: c1" in out
    lines: list[str] = []
    TextEvent(sender="a", recipient="b", content="x").print(lambda *a, **k: lines.append(str(a)))
    assert lines
