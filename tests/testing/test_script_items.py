"""Pure units: how user input becomes scripted items, and bad input is refused clearly."""

from __future__ import annotations

import pytest

from parley.testing import Disconnect, ErrorReply, FakeLLMServer, MalformedReply, Reply, ToolCall
from parley.testing._script import to_item


def test_forms_of_items() -> None:
    assert to_item("hi") == Reply(choices=(to_item("hi").choices[0],))  # type: ignore[union-attr]
    reply = to_item({"tool_calls": [{"name": "f", "arguments": {"x": [1, 2]}}], "delay": 1})
    assert isinstance(reply, Reply)
    assert reply.choices[0].tool_calls == (ToolCall("f", '{"x": [1, 2]}'),)
    assert reply.delay == 1.0
    error = to_item({"error": 429, "headers": {"Retry-After": 2}})
    assert error == ErrorReply(429, headers={"Retry-After": "2"})
    assert to_item({"disconnect": True}) == Disconnect()
    assert to_item({"malformed": "{"}) == MalformedReply("{")


@pytest.mark.parametrize(
    ("spec", "error", "fragment"),
    [
        (42, TypeError, "cannot use 42"),
        ({"contnet": "typo"}, TypeError, "contnet"),
        ({"tool_calls": [{"arguments": {}}]}, TypeError, "non-empty 'name'"),
        ({"tool_calls": ["f"]}, TypeError, "tool_calls[0]"),
        ({"content": 5}, TypeError, "content must be a str"),
        ({"error": 99}, ValueError, "HTTP status"),
        ({"error": 500, "colour": "red"}, TypeError, "colour"),
        ({"content": "x", "delay": -1}, ValueError, "delay"),
        ({"disconnect": True, "extra": 1}, TypeError, "extra"),
        ({"choices": []}, TypeError, "must not be empty"),
        ({"content": "a", "choices": ["b"]}, TypeError, "not both"),
        ({"tool_calls": [{"name": "f", "arguments": {1, 2}}]}, TypeError, "JSON-serialisable"),
    ],
)
def test_bad_items_are_refused_with_a_reason(
    spec: object, error: type[Exception], fragment: str
) -> None:
    with pytest.raises(error, match=None) as info:
        to_item(spec)
    assert fragment in str(info.value)


def test_add_reply_validates_before_queueing() -> None:
    server = FakeLLMServer()  # not started: the script can be prepared before serving
    with pytest.raises(TypeError):
        server.add_reply(tool_calls=[{"nam": "f"}])
    assert server.pending == 0
    server.add("a", {"content": "b"}, {"error": 500})
    assert server.pending == 3
