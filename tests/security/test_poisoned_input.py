"""Input that would poison a chat: a message that, once stored, makes every later model request
fail, or tool-call arguments that end the chat with a RecursionError.

A message no request can carry is refused before either agent stores it, with an error saying
what is wrong; text no request can carry (lone surrogates) is stored repaired, with a warning.
Either way the chat goes on working.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from parley import ConversableAgent, GroupChat, GroupChatManager
from parley.exceptions import InvalidMessageError, MessageRepairedWarning
from parley.function_utils import ArgumentsValidationError, validate_arguments
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

VARIANTS = pytest.mark.parametrize("variant", ["sync", "async"])

# Each would be stored as is before the fix and make the next model request fail (a 400, or
# an encoding error before the request), or fail at once while printing, after being stored.
BAD_MESSAGES = {
    "dict content": ({"content": {"text": "hi"}}, "content must be"),
    "int content": ({"content": 5}, "content must be"),
    "part without type": ({"content": [{"text": "hi"}]}, r"content\[0\].*'type'"),
    "part with int type": ({"content": [{"type": 3, "text": "hi"}]}, r"content\[0\].*'type'"),
    "text part without text": ({"content": [{"type": "text"}]}, r"content\[0\].*'text'"),
    "part that is a str": ({"content": ["hi"]}, r"content\[0\]"),
    "int name": ({"content": "hi", "name": 3}, "name must be a str"),
    "tool_calls not a list": ({"tool_calls": {"id": "c"}}, "tool_calls must be a list"),
    "tool call without function": ({"tool_calls": [{"id": "c"}]}, r"tool_calls\[0\]"),
    "tool call with dict arguments": (
        {"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}]},
        r"tool_calls\[0\]\.function\.arguments must be a str",
    ),
    "function call without arguments": (
        {"function_call": {"name": "f"}},
        r"function_call\.arguments must be a str",
    ),
    "empty tool_calls and no content": ({"tool_calls": []}, "content or function_call"),
    "tool response with dict content": (
        {"content": "x", "tool_responses": [{"role": "tool", "content": {"a": 1}}]},
        r"tool_responses\[0\]\.content must be",
    ),
    "int tool_call_id": ({"content": "x", "tool_call_id": 5}, "tool_call_id must be a str"),
    "deeply nested part": (
        {"content": [{"type": "image_url", "image_url": json.loads("[" * 200 + "]" * 200)}]},
        "nested more than",
    ),
}


def llm_pair(server: FakeLLMServer) -> tuple[ConversableAgent, ConversableAgent]:
    """A (no LLM) and B (answers with the fake LLM)."""
    a = ConversableAgent("A", llm_config=False, human_input_mode="NEVER")
    b = ConversableAgent("B", llm_config=server.llm_config(), human_input_mode="NEVER")
    return a, b


async def call(variant: str, obj: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    if variant == "async":
        return await getattr(obj, "a_" + method)(*args, **kwargs)
    return await asyncio.to_thread(getattr(obj, method), *args, **kwargs)


async def assert_chat_still_works(
    variant: str, server: FakeLLMServer, a: ConversableAgent, b: ConversableAgent
) -> None:
    """A later turn reaches the model and B's answer is delivered."""
    server.add_reply("still here")
    before = len(server.requests)
    await call(variant, a, "send", "hello", b, request_reply=True)
    assert len(server.requests) == before + 1
    assert a.chat_messages[b][-1]["content"] == "still here"


@VARIANTS
@pytest.mark.parametrize(("message", "match"), BAD_MESSAGES.values(), ids=BAD_MESSAGES.keys())
async def test_send_refuses_a_message_before_storing_it(
    variant: str, fake_llm: FakeLLMServer, message: Any, match: str
) -> None:
    a, b = llm_pair(fake_llm)
    with IOStream.set_default(IOScripted()):
        with pytest.raises(InvalidMessageError, match=match) as caught:
            await call(variant, a, "send", message, b, request_reply=True)
        assert "'A'" in str(caught.value)
        assert "'B'" in str(caught.value)
        assert a.chat_messages[b] == []
        assert b.chat_messages[a] == []
        assert fake_llm.requests == []
        await assert_chat_still_works(variant, fake_llm, a, b)


def test_the_error_is_a_value_error_and_a_type_error() -> None:
    """AutoGen code catches ValueError for a message it cannot store, and parley raised
    TypeError for a message of the wrong type: both still work."""
    a = ConversableAgent("A", llm_config=False)
    b = ConversableAgent("B", llm_config=False)
    with pytest.raises(ValueError, match="content must be"):
        a.send({"content": 5}, b, request_reply=False)
    with pytest.raises(TypeError, match="content must be"):
        a.send({"content": 5}, b, request_reply=False)


def test_a_hook_that_breaks_the_message_is_caught_before_storing() -> None:
    """The message is checked after process_message_before_send, which may replace it."""
    a = ConversableAgent("A", llm_config=False)
    b = ConversableAgent("B", llm_config=False)
    a.register_hook("process_message_before_send", lambda sender, message, recipient, silent: 42)
    with pytest.raises(InvalidMessageError, match="a message must be a str or a dict"):
        a.send("hi", b, request_reply=False)
    assert a.chat_messages[b] == []
    assert b.chat_messages[a] == []


@VARIANTS
@pytest.mark.parametrize(("message", "match"), BAD_MESSAGES.values(), ids=BAD_MESSAGES.keys())
async def test_receive_refuses_a_message_before_storing_it(
    variant: str, fake_llm: FakeLLMServer, message: Any, match: str
) -> None:
    a, b = llm_pair(fake_llm)
    with IOStream.set_default(IOScripted()):
        with pytest.raises(InvalidMessageError, match=match):
            await call(variant, b, "receive", message, a, request_reply=True)
        assert b.chat_messages[a] == []
        assert fake_llm.requests == []
        await assert_chat_still_works(variant, fake_llm, a, b)


@VARIANTS
async def test_a_reply_function_returning_a_bad_message_stores_nothing(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    a, b = llm_pair(fake_llm)
    a.register_reply([ConversableAgent, None], lambda *_, **__: (True, {"content": {"x": 1}}))
    fake_llm.add_reply("first answer")
    with (
        IOStream.set_default(IOScripted()),
        pytest.raises(InvalidMessageError, match="content must be"),
    ):
        await call(variant, a, "initiate_chat", b, message="hi", max_turns=2)
    history = [m["content"] for m in b.chat_messages[a]]
    assert history == ["hi", "first answer"]
    assert [m["content"] for m in a.chat_messages[b]] == history


@VARIANTS
async def test_a_bad_first_message_is_refused(variant: str, fake_llm: FakeLLMServer) -> None:
    a, b = llm_pair(fake_llm)
    with (
        IOStream.set_default(IOScripted()),
        pytest.raises(InvalidMessageError, match=r"content\[0\] must be a content part"),
    ):
        await call(variant, a, "initiate_chat", b, message={"content": ["hi", 1]})
    assert fake_llm.requests == []
    assert a.chat_messages[b] == []
    assert b.chat_messages[a] == []


@VARIANTS
async def test_a_group_member_cannot_broadcast_a_bad_message(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    bad = ConversableAgent("bad", llm_config=False, human_input_mode="NEVER")
    bad.register_reply([ConversableAgent, None], lambda *_, **__: (True, {"content": 7}))
    listener = ConversableAgent("listener", llm_config=fake_llm.llm_config())
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    group = GroupChat(
        agents=[user, bad, listener], messages=[], speaker_selection_method="round_robin"
    )
    manager = GroupChatManager(group, llm_config=False)
    with (
        IOStream.set_default(IOScripted()),
        pytest.raises(InvalidMessageError, match="content must be"),
    ):
        await call(variant, user, "initiate_chat", manager, message="go")
    assert [m["content"] for m in group.messages] == ["go"]
    assert [m["content"] for m in listener.chat_messages[manager]] == ["go"]
    assert bad.chat_messages[manager][-1]["content"] == "go"
    assert fake_llm.requests == []


def test_group_chat_append_refuses_a_bad_message() -> None:
    a = ConversableAgent("a", llm_config=False)
    group = GroupChat(agents=[a], messages=[])
    with pytest.raises(InvalidMessageError, match=r"content\[0\]"):
        group.append({"content": [{"text": "no type"}]}, a)
    assert group.messages == []


# -- legitimate messages stay accepted --------------------------------------------------------

GOOD_MESSAGES = {
    "multimodal": {
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ]
    },
    "tool calls": {
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    },
    "tool calls without id (Mistral)": {
        "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]
    },
    "tool responses": {
        "role": "tool",
        "content": "3",
        "tool_responses": [{"tool_call_id": "call_1", "role": "tool", "content": "3"}],
    },
    "function message": {"role": "function", "name": "f", "content": "3"},
    "function call": {"function_call": {"name": "f", "arguments": '{"a": 1}'}},
    "context": {"content": "hi {x}", "context": {"x": "there"}},
    "override_role": {"content": "hi", "override_role": "system"},
    "empty content": {"content": ""},
}


@pytest.mark.parametrize("message", GOOD_MESSAGES.values(), ids=GOOD_MESSAGES.keys())
def test_legitimate_autogen_messages_are_stored_as_given(message: dict[str, Any]) -> None:
    a = ConversableAgent("A", llm_config=False)
    b = ConversableAgent("B", llm_config=False)
    with IOStream.set_default(IOScripted()):
        a.send(message, b, request_reply=False)
    stored = b.chat_messages[a][-1]
    for key in ("content", "tool_calls", "tool_responses", "function_call", "context"):
        if message.get(key) is not None:
            assert stored[key] == message[key]


# -- lone surrogates: repaired with a warning -------------------------------------------------

SURROGATE_MESSAGES = {
    "content": ({"content": "caf\udce9"}, ["content"]),
    "text part": ({"content": [{"type": "text", "text": "\ud800!"}]}, ["content", 0, "text"]),
    "tool-call arguments": (
        {"tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": '{"a": "\udcff"}'}}]},
        ["tool_calls", 0, "function", "arguments"],
    ),
    "tool response": (
        {
            "role": "tool",
            "content": "x",
            "tool_responses": [{"tool_call_id": "c1", "role": "tool", "content": "\udc80"}],
        },
        ["tool_responses", 0, "content"],
    ),
    "name": ({"content": "hi", "name": "n\ud83d"}, ["name"]),
}


def dig(value: Any, path: list[Any]) -> Any:
    for key in path:
        value = value[key]
    return value


@pytest.mark.parametrize(("message", "path"), SURROGATE_MESSAGES.values(), ids=SURROGATE_MESSAGES)
def test_lone_surrogates_are_replaced_with_a_warning(
    message: dict[str, Any], path: list[Any]
) -> None:
    a = ConversableAgent("A", llm_config=False)
    b = ConversableAgent("B", llm_config=False)
    original = json.dumps(message)
    with (
        IOStream.set_default(IOScripted()) as io,
        pytest.warns(MessageRepairedWarning, match="U\\+FFFD") as warned,
    ):
        a.send(message, b, request_reply=False)
    assert len(warned) == 1  # one send, one warning (not one per agent)
    for stored in (a.chat_messages[b][-1], b.chat_messages[a][-1]):
        text = dig(stored, path)
        assert "\ufffd" in text
        text.encode("utf-8")  # no surrogate left
        json.dumps(stored, ensure_ascii=False).encode("utf-8")
    if path != ["name"]:  # the name field is not printed
        assert "\ufffd" in io.text
    assert json.dumps(message) == original  # the caller's dict is not modified


def test_a_surrogate_from_the_model_does_not_break_the_next_turn(fake_llm: FakeLLMServer) -> None:
    a, b = llm_pair(fake_llm)
    fake_llm.add_reply("bad \ud800 text")  # sent as the JSON escape \ud800
    with IOStream.set_default(IOScripted()):
        with pytest.warns(MessageRepairedWarning):
            a.send("hi", b, request_reply=True)
        assert a.chat_messages[b][-1]["content"] == "bad \ufffd text"
        fake_llm.add_reply("fine")
        a.send("again", b, request_reply=True)
    assert a.chat_messages[b][-1]["content"] == "fine"
    assert fake_llm.requests[-1]["messages"][-2]["content"] == "bad \ufffd text"


def test_a_tool_result_with_surrogates_does_not_break_the_next_turn(
    fake_llm: FakeLLMServer,
) -> None:
    """A tool that lists files whose names are not UTF-8 returns surrogate escapes."""
    assistant = ConversableAgent("assistant", llm_config=fake_llm.llm_config())
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    user.register_function({"ls": lambda: b"caf\xe9.txt".decode("utf-8", "surrogateescape")})
    fake_llm.add_reply(tool_calls=[{"name": "ls", "arguments": "{}"}])
    fake_llm.add_reply("done")
    with IOStream.set_default(IOScripted()), pytest.warns(MessageRepairedWarning):
        result = user.initiate_chat(assistant, message="list", max_turns=2)
    assert result.chat_history[-1]["content"] == "done"
    tool_message = fake_llm.requests[-1]["messages"][-1]
    assert (tool_message["role"], tool_message["content"]) == ("tool", "caf\ufffd.txt")


# -- tool-call arguments nested too deeply ----------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    ["[" * 100_000, '{"a": ' + "[" * 5_000 + "]" * 5_000 + "}", "{" * 100_000],
    ids=["unclosed 100k", "closed 5k in an object", "braces 100k"],
)
def test_deeply_nested_arguments_become_an_error_for_the_model(
    fake_llm: FakeLLMServer, arguments: str
) -> None:
    assistant = ConversableAgent("assistant", llm_config=fake_llm.llm_config())
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    calls: list[Any] = []
    user.register_function({"f": lambda **kwargs: calls.append(kwargs) or "ran"})
    fake_llm.add_reply(tool_calls=[{"name": "f", "arguments": arguments}])
    fake_llm.add_reply("done")
    with IOStream.set_default(IOScripted()):
        result = user.initiate_chat(assistant, message="go", max_turns=2)
    assert calls == []
    assert result.chat_history[-1]["content"] == "done"
    error = fake_llm.requests[-1]["messages"][-1]["content"]
    assert error.startswith("Error: ")
    assert "nested" in error


def deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


def test_deeply_nested_parsed_arguments_become_an_error() -> None:
    agent = ConversableAgent("user", llm_config=False)
    agent.register_function({"f": lambda a: "ran"})
    with IOStream.set_default(IOScripted()) as io:
        ok, result = agent.execute_function({"name": "f", "arguments": {"a": deep(100_000)}})
        assert not ok
        assert result["content"].startswith("Error: ")
        assert "nested" in result["content"]
        # And through the tool-call reply, with the deep value in a message.
        function = {"name": "f", "arguments": {"a": deep(100_000)}}
        message = {"tool_calls": [{"id": "c", "function": function}]}
        final, reply = agent.generate_tool_calls_reply(messages=[message])
    assert final
    assert reply is not None
    assert "nested" in reply["tool_responses"][0]["content"]
    assert "ran" not in io.text


def test_a_tool_result_too_deep_to_print_is_an_error_not_a_crash() -> None:
    agent = ConversableAgent("user", llm_config=False)
    agent.register_function({"f": lambda: deep(100_000)})
    with IOStream.set_default(IOScripted()):
        ok, result = agent.execute_function({"name": "f", "arguments": "{}"})
    assert not ok
    assert result["content"].startswith("Error: RecursionError")


def test_validation_errors_do_not_recurse_on_a_deep_value() -> None:
    def f(a: int) -> int:
        return a

    with pytest.raises(ArgumentsValidationError, match="Input should be a valid integer"):
        validate_arguments(f, {"a": deep(100_000)})


# -- templates (format strings and callables filled from a context) ---------------------------


@VARIANTS
async def test_a_callable_template_does_not_break_later_turns(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    """A template's context is used up by the first request; the function itself could never
    be sent again, so the stored message keeps the text it was filled to."""
    a = ConversableAgent("A", llm_config=fake_llm.llm_config(), human_input_mode="NEVER")
    b = ConversableAgent("B", llm_config=fake_llm.llm_config(), human_input_mode="NEVER")
    message = {"content": lambda ctx: f"Hello {ctx['who']}", "context": {"who": "Ann"}}
    fake_llm.add_reply("hi Ann")
    fake_llm.add_reply("and again")
    fake_llm.add_reply("A answers")
    with IOStream.set_default(IOScripted()):
        await call(variant, a, "send", message, b, request_reply=True)
        await call(variant, a, "send", "more", b, request_reply=True)
        await call(variant, b, "send", "over to A", a, request_reply=True)
    assert fake_llm.requests[0]["messages"][-1]["content"] == "Hello Ann"
    assert fake_llm.requests[1]["messages"][1]["content"] == "Hello Ann"  # B's later turn
    assert fake_llm.requests[2]["messages"][1]["content"] == "Hello Ann"  # A's own copy
    assert b.chat_messages[a][0]["content"] == "Hello Ann"


def test_a_template_without_a_context_is_refused() -> None:
    a = ConversableAgent("A", llm_config=False)
    b = ConversableAgent("B", llm_config=False)
    with pytest.raises(InvalidMessageError, match="content must be"):
        a.send({"content": lambda ctx: "x"}, b, request_reply=False)
    assert a.chat_messages[b] == []


def test_a_content_part_of_another_type_does_not_break_printing_or_the_group() -> None:
    """OpenAI takes audio and file parts; printing showed only text and images and raised on
    the rest, after the message was stored."""
    a = ConversableAgent("A", llm_config=False)
    b = ConversableAgent("B", llm_config=False)
    audio = {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
    message = {"content": [{"type": "text", "text": "listen: "}, audio]}
    group = GroupChat(agents=[a, b], messages=[])
    with IOStream.set_default(IOScripted()) as io:
        a.send(message, b, request_reply=False)
        group.append(message, a)
    assert "listen: <input_audio>" in io.text
    assert b.chat_messages[a][-1]["content"] == message["content"]
    assert group.messages[-1]["content"] == "listen: <input_audio>"


def test_an_openai_message_object_is_stored_as_plain_dicts() -> None:
    from openai.types.chat import ChatCompletionMessage

    message = ChatCompletionMessage.model_validate(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        }
    )
    a = ConversableAgent("A", llm_config=False)
    b = ConversableAgent("B", llm_config=False)
    with IOStream.set_default(IOScripted()):
        a.send(message, b, request_reply=False)
    stored = b.chat_messages[a][-1]
    assert stored["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    ]
    json.dumps(stored)
