"""AutoGen's private ConversableAgent helpers (parley/agentchat/_compat_internals.py).

Contrib modules and third-party subclasses call and override these underscored names, so they
are the compatibility surface here. Overrides are checked through real chats on the fake LLM.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import threading
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

import parley
from parley import (
    Agent,
    ConversableAgent,
    GroupChat,
    GroupChatManager,
    InvalidCarryOverType,
    SenderRequired,
)
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

AUTOGEN_INVALID_RECEIVED = (
    "Received message can't be converted into a valid ChatCompletion message. Either content or "
    "function_call must be provided."
)
AUTOGEN_INVALID_SENT = (
    "Message can't be converted into a valid ChatCompletion message. Either content or "
    "function_call must be provided."
)


def agent(name: str, cls: type[ConversableAgent] = ConversableAgent, **kwargs: Any) -> Any:
    kwargs.setdefault("human_input_mode", "NEVER")
    kwargs.setdefault("code_execution_config", False)
    return cls(name, **kwargs)


def llm_agent(
    name: str, fake_llm: FakeLLMServer, cls: type[ConversableAgent] = ConversableAgent
) -> Any:
    return agent(name, cls, llm_config=fake_llm.llm_config())


class Pt(BaseModel):
    x: int


# -- 18.1 _wrap_function ------------------------------------------------------------------------


def test_wrap_function_returns_a_str_and_keeps_the_functions_face() -> None:
    def f(x: int) -> dict[str, int]:
        """Doc of f."""
        return {"x": x}

    wrapped = agent("a")._wrap_function(f)
    assert wrapped(x=2) == '{"x": 2}'
    assert wrapped.__name__ == "f"
    assert wrapped.__doc__ == "Doc of f."
    assert wrapped.__wrapped__ is f
    assert wrapped._origin is f
    assert not inspect.iscoroutinefunction(wrapped)


def test_wrap_function_of_a_coroutine_function_is_async() -> None:
    async def f(x: int) -> list[int]:
        return [x, x]

    wrapped = agent("a")._wrap_function(f)
    assert inspect.iscoroutinefunction(wrapped)
    assert asyncio.run(wrapped(x=1)) == "[1, 1]"
    assert wrapped._origin is f


def test_wrap_function_loads_pydantic_keyword_arguments() -> None:
    def f(p: Pt) -> Pt:
        assert isinstance(p, Pt)
        return p

    assert agent("a")._wrap_function(f)(p={"x": 3}) == '{"x":3}'


def test_wrap_function_leaves_positional_arguments_as_they_are() -> None:
    def f(p: Pt) -> str:
        return type(p).__name__

    assert agent("a")._wrap_function(f)({"x": 3}) == "dict"


def test_register_for_execution_stores_the_wrapper_and_register_function_the_function() -> None:
    a = agent("a")

    def f(x: int) -> dict[str, int]:
        return {"x": x}

    assert a.register_for_execution()(f) is f
    assert a.function_map["f"] is not f
    assert a.function_map["f"]._origin == f
    assert a.function_map["f"](x=1) == '{"x": 1}'

    b = agent("b")
    b.register_function({"f": f})
    assert b.function_map["f"] is f
    assert b.function_map["f"](x=1) == {"x": 1}


def test_register_for_execution_goes_through_an_overriding_wrap_function() -> None:
    class Tracing(ConversableAgent):
        def _wrap_function(self, func: Any) -> Any:
            wrapped = super()._wrap_function(func)

            @functools.wraps(func)
            def traced(**kwargs: Any) -> str:
                return "traced " + wrapped(**kwargs)

            return traced

    a = agent("a", Tracing)

    @a.register_for_execution(name="double")
    def double(x: int) -> int:
        return 2 * x

    assert a.function_map["double"](x=4) == "traced 8"


def test_a_tool_registered_for_execution_answers_the_model_with_text(
    fake_llm: FakeLLMServer,
) -> None:
    assistant = llm_agent("assistant", fake_llm)
    user = agent("user")

    async def where(p: Pt) -> dict[str, int]:
        return {"double": 2 * p.x}

    parley.register_function(where, caller=assistant, executor=user, description="Where.")
    fake_llm.add_reply(tool_calls=[{"name": "where", "arguments": {"p": {"x": 4}}}])
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="go", silent=True)
    tool_messages = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ['{"double": 8}']


# -- 18.2 carryover -----------------------------------------------------------------------------


def test_process_carryover() -> None:
    a = agent("a")
    assert a._process_carryover("msg", {}) == "msg"
    assert a._process_carryover("msg", {"carryover": ""}) == "msg"
    assert a._process_carryover("msg", {"carryover": "c"}) == "msg\nContext: \nc"
    assert (
        a._process_carryover("msg", {"carryover": ["x", {"content": "y"}]})
        == "msg\nContext: \nx\ny"
    )
    with pytest.raises(InvalidCarryOverType) as info:
        a._process_carryover("msg", {"carryover": 5})
    assert str(info.value) == (
        "Carryover should be a string or a list of strings. Not adding carryover to the message."
    )


def test_process_multimodal_carryover_prepends_a_text_part() -> None:
    content = [{"type": "text", "text": "look"}]
    result = agent("a")._process_multimodal_carryover(content, {"carryover": ["c1", "c2"]})
    assert result == [{"type": "text", "text": "\nContext: \nc1\nc2"}, *content]
    assert content == [{"type": "text", "text": "look"}]


def test_handle_carryover() -> None:
    a = agent("a")
    kwargs = {"carryover": "c"}
    message = {"content": "task", "name": "x"}
    assert a._handle_carryover("task", {}) == "task"
    assert a._handle_carryover(message, {"carryover": []}) is message
    assert a._handle_carryover("task", kwargs) == "task\nContext: \nc"
    copied = a._handle_carryover(message, kwargs)
    assert copied == {"content": "task\nContext: \nc", "name": "x"}
    assert message == {"content": "task", "name": "x"}
    parts = {"content": [{"type": "text", "text": "t"}]}
    assert a._handle_carryover(parts, kwargs) == {
        "content": [{"type": "text", "text": "\nContext: \nc"}, {"type": "text", "text": "t"}]
    }
    assert parts == {"content": [{"type": "text", "text": "t"}]}
    call = {"content": None, "function_call": {"name": "f", "arguments": "{}"}}
    assert a._handle_carryover(call, kwargs) is call
    # The message's type is checked before the carryover's (AutoGen's order).
    assert a._handle_carryover(call, {"carryover": 5}) is call
    with pytest.raises(InvalidCarryOverType) as info:
        a._handle_carryover(5, kwargs)
    assert str(info.value) == "Carryover should be a string or a list of strings."


def test_generate_init_message_uses_the_overridable_carryover_helpers() -> None:
    class Labelled(ConversableAgent):
        def _process_carryover(self, content: str, kwargs: dict[str, Any]) -> str:
            return f"{content} [after: {kwargs['carryover']}]"

    a = agent("a", Labelled)
    assert a.generate_init_message("task", carryover="x") == "task [after: x]"
    assert asyncio.run(a.a_generate_init_message("task", carryover="x")) == "task [after: x]"


class Retriever(ConversableAgent):
    """Builds its own first message, as RAG agents do, and stays compatible with carryover."""

    def generate_init_message(self, message: Any, **kwargs: Any) -> Any:
        return self._handle_carryover(f"Answer from the documents: {message}", kwargs)


def _two_chats(fake_llm: FakeLLMServer, sender: Any) -> list[dict[str, Any]]:
    first = llm_agent("first", fake_llm)
    second = llm_agent("second", fake_llm)
    fake_llm.add_reply("summary one")
    fake_llm.add_reply("done")
    return [
        {"sender": sender, "recipient": first, "message": "task one", "max_turns": 1},
        {"sender": sender, "recipient": second, "message": "task two", "max_turns": 1},
    ]


def test_initiate_chats_carryover_reaches_a_generate_init_message_override(
    fake_llm: FakeLLMServer,
) -> None:
    sender = agent("sender", Retriever)
    results = sender.initiate_chats(_two_chats(fake_llm, sender))
    assert results[1].chat_history[0]["content"] == (
        "Answer from the documents: task two\nContext: \nsummary one"
    )
    assert fake_llm.requests[1]["messages"][-1]["content"] == (
        "Answer from the documents: task two\nContext: \nsummary one"
    )


async def test_async_chats_call_a_sync_generate_init_message_override(
    fake_llm: FakeLLMServer,
) -> None:
    sender = agent("sender", Retriever)
    queue = _two_chats(fake_llm, sender)
    for i, entry in enumerate(queue):
        entry["chat_id"] = i
    queue[1]["prerequisites"] = [0]
    results = await sender.a_initiate_chats(queue)
    assert results[1].chat_history[0]["content"] == (
        "Answer from the documents: task two\nContext: \nsummary one"
    )


# -- 18.3 _match_trigger ------------------------------------------------------------------------


class Marker:
    """A class that is not an agent: calling it with a sender would fail."""


class CallableAgent(ConversableAgent):
    def __call__(self, sender: Any) -> bool:
        raise AssertionError("an agent trigger is compared, never called")


def test_match_trigger_table() -> None:
    a, b = agent("a"), agent("b")
    m = a._match_trigger
    assert m(None, None) is True
    assert m(None, b) is False
    assert m("b", b) is True
    assert m("c", b) is False
    with pytest.raises(SenderRequired):
        m("b", None)
    assert m(ConversableAgent, b) is True
    assert m(Agent, b) is True
    assert m(Marker, b) is False  # a class is tested before the callable case
    assert m(b, b) is True
    assert m(a, b) is False
    c = agent("c", CallableAgent)
    assert m(c, c) is True  # an agent before the callable case
    assert m(c, b) is False
    assert m(lambda s: s is b, b) is True
    assert m(lambda s: False, b) is False
    assert m([Marker, "b"], b) is True
    assert m([Marker, "x"], b) is False
    assert m([None], None) is True


def test_match_trigger_errors() -> None:
    a, b = agent("a"), agent("b")

    def not_a_bool(sender: Any) -> Any:
        return "yes"

    with pytest.raises(AssertionError) as info:
        a._match_trigger(not_a_bool, b)
    assert str(info.value) == f"trigger {not_a_bool} must return a boolean value."
    with pytest.raises(ValueError, match="Unsupported trigger type") as error:
        a._match_trigger(3, b)
    assert str(error.value) == "Unsupported trigger type: <class 'int'>"


def test_generate_reply_asks_an_overriding_match_trigger() -> None:
    class EveryoneIsVip(ConversableAgent):
        def _match_trigger(self, trigger: Any, sender: Any) -> bool:
            return trigger == "vip" or super()._match_trigger(trigger, sender)

    a, b = agent("a", EveryoneIsVip), agent("b")
    a.register_reply("vip", lambda *args, **kwargs: (True, "for vips"))
    assert a.generate_reply([{"content": "hi", "role": "user"}], b) == "for vips"
    plain = agent("plain")
    plain.register_reply("vip", lambda *args, **kwargs: (True, "for vips"))
    assert plain.generate_reply([{"content": "hi", "role": "user"}], b) == ""


# -- 18.4 _append_oai_message -------------------------------------------------------------------


def test_append_oai_message_role_and_name_rules() -> None:
    a, b = agent("a"), agent("b")
    assert a._append_oai_message("hi", "assistant", b, is_sending=True) is True
    assert a._append_oai_message({"content": "yo", "role": "system"}, "user", b, False) is True
    tool = {"role": "tool", "tool_call_id": "c1", "content": "3"}
    assert a._append_oai_message(tool, "user", b, is_sending=False) is True
    call = {"content": None, "function_call": {"name": "f", "arguments": "{}"}, "role": "user"}
    assert a._append_oai_message(call, "user", b, is_sending=False) is True
    system = {"content": "s", "override_role": "system", "name": "boss", "foo": 1}
    assert a._append_oai_message(system, "user", b, is_sending=False) is True
    assert a.chat_messages[b] == [
        {"content": "hi", "role": "assistant", "name": "a"},
        {"content": "yo", "role": "user", "name": "b"},
        {"tool_call_id": "c1", "content": "3", "role": "tool", "name": "b"},
        {"content": None, "function_call": {"name": "f", "arguments": "{}"}, "role": "assistant"},
        {"content": "s", "name": "boss", "role": "system"},
    ]


def test_append_oai_message_refuses_a_message_without_content_or_call() -> None:
    a, b = agent("a"), agent("b")
    assert a._append_oai_message({"foo": 1}, "user", b, is_sending=False) is False
    assert a._append_oai_message({"content": None}, "assistant", b, is_sending=True) is False
    assert a.chat_messages.get(b, []) == []


def test_message_to_dict() -> None:
    assert ConversableAgent._message_to_dict("hi") == {"content": "hi"}
    message = {"content": "x"}
    assert ConversableAgent._message_to_dict(message) is message
    assert ConversableAgent._message_to_dict([("content", "pairs")]) == {"content": "pairs"}


class Multimodal(ConversableAgent):
    """Stores text as content parts, as MultimodalConversableAgent does with <img> tags."""

    @staticmethod
    def _message_to_dict(message: Any) -> dict[str, Any]:
        if isinstance(message, str):
            return {"content": [{"type": "text", "text": message}]}
        message = dict(message)
        if isinstance(message.get("content"), str):
            message["content"] = [{"type": "text", "text": message["content"]}]
        return message


def test_an_overriding_message_to_dict_decides_how_messages_are_stored(
    fake_llm: FakeLLMServer,
) -> None:
    viewer = llm_agent("viewer", fake_llm, Multimodal)
    user = agent("user")
    fake_llm.add_reply("a red square")
    result = user.initiate_chat(viewer, message="what is this?", max_turns=1, silent=True)
    assert viewer.chat_messages[user] == [
        {"content": [{"type": "text", "text": "what is this?"}], "role": "user", "name": "user"},
        {
            "content": [{"type": "text", "text": "a red square"}],
            "role": "assistant",
            "name": "viewer",
        },
    ]
    # The plain agent's copies stay plain.
    assert [m["content"] for m in result.chat_history] == ["what is this?", "a red square"]
    sent = fake_llm.requests[0]["messages"][-1]
    assert sent["content"] == [{"type": "text", "text": "what is this?"}]


class Recording(ConversableAgent):
    """Sees every message it stores, then stores it the usual way."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[tuple[Any, str, str, bool]] = []

    def _append_oai_message(
        self, message: Any, role: str, conversation_id: Any, is_sending: bool
    ) -> bool:
        self.seen.append((message, role, conversation_id.name, is_sending))
        return super()._append_oai_message(message, role, conversation_id, is_sending)


@pytest.mark.parametrize("variant", ["sync", "async"])
def test_an_overriding_append_oai_message_sees_every_stored_message(
    fake_llm: FakeLLMServer, variant: str
) -> None:
    bot = llm_agent("bot", fake_llm, Recording)
    user = agent("user", max_consecutive_auto_reply=1)
    fake_llm.add_reply("one")
    fake_llm.add_reply("two")
    if variant == "sync":
        user.initiate_chat(bot, message="start", silent=True)
    else:
        asyncio.run(user.a_initiate_chat(bot, message="start", silent=True))
    assert bot.seen == [
        ("start", "user", "user", False),
        ("one", "assistant", "user", True),
        ("", "user", "user", False),
        ("two", "assistant", "user", True),
    ]
    assert [m["role"] for m in bot.chat_messages[user]] == ["user", "assistant"] * 2


def test_an_append_oai_message_that_refuses_stops_the_send_or_the_receive() -> None:
    class Refusing(ConversableAgent):
        def _append_oai_message(self, *args: Any, **kwargs: Any) -> bool:
            return False

    refusing, plain = agent("refusing", Refusing), agent("plain")
    with pytest.raises(ValueError, match=AUTOGEN_INVALID_SENT):
        refusing.send("hi", plain)
    assert plain.chat_messages.get(refusing, []) == []
    with pytest.raises(ValueError, match=AUTOGEN_INVALID_RECEIVED):
        plain.send("hi", refusing, request_reply=False)


# -- 18.5 _process_received_message and _is_silent ----------------------------------------------


def test_process_received_message_stores_and_prints() -> None:
    a, b = agent("a"), agent("b")
    with IOStream.set_default(IOScripted()) as io:
        a._process_received_message("hello", b, False)
        a._process_received_message("quiet", b, True)
    assert [m["content"] for m in a.chat_messages[b]] == ["hello", "quiet"]
    assert io.text == "b (to a):\n\nhello\n\n" + "-" * 80 + "\n"


def test_process_received_message_refuses_what_cannot_be_stored() -> None:
    a, b = agent("a"), agent("b")
    with pytest.raises(ValueError, match=AUTOGEN_INVALID_RECEIVED):
        a._process_received_message({"foo": 1}, b, False)
    with pytest.raises(ValueError, match=AUTOGEN_INVALID_RECEIVED):
        a.receive({"foo": 1}, b, request_reply=False)
    assert a.chat_messages.get(b, []) == []


@pytest.mark.parametrize(
    ("agent_silent", "silent", "expected"),
    [(None, False, False), (None, True, True), (True, False, True), (False, True, False)],
)
def test_is_silent(agent_silent: bool | None, silent: bool, expected: bool) -> None:
    sender = agent("s", silent=agent_silent)
    assert ConversableAgent._is_silent(sender, silent) is expected
    b = agent("b")
    with IOStream.set_default(IOScripted()) as io:
        b._process_received_message("m", sender, silent)
    assert (io.text == "") is expected


class Screen(ConversableAgent):
    """Sends what it receives to its own screen (a GUI, say) and keeps the usual storage."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.screen: list[tuple[str, Any]] = []
        self.threads: set[str] = set()

    def _process_received_message(self, message: Any, sender: Any, silent: Any) -> None:
        self.threads.add(threading.current_thread().name)
        self.screen.append((sender.name, message))
        super()._process_received_message(message, sender, True)


@pytest.mark.parametrize("variant", ["sync", "async"])
def test_an_overriding_process_received_message_runs_in_the_chat(
    fake_llm: FakeLLMServer, variant: str
) -> None:
    bot = llm_agent("bot", fake_llm, Screen)
    user = agent("user")
    fake_llm.add_reply("hello back")
    with IOStream.set_default(IOScripted()) as io:
        if variant == "sync":
            user.initiate_chat(bot, message="hello", max_turns=1)
        else:
            asyncio.run(user.a_initiate_chat(bot, message="hello", max_turns=1))
    assert bot.screen == [("user", "hello")]
    assert [m["content"] for m in bot.chat_messages[user]] == ["hello", "hello back"]
    # The override silenced its own printing; the user still printed the reply it received.
    assert "user (to bot)" not in io.text
    assert "bot (to user):\n\nhello back" in io.text
    # User code that may block runs off the event loop.
    assert "parley-runner" not in bot.threads
    assert threading.main_thread().name not in bot.threads


def test_an_overriding_print_received_message_replaces_the_console(
    fake_llm: FakeLLMServer,
) -> None:
    class Gui(ConversableAgent):
        shown: ClassVar[list[str]] = []

        def _print_received_message(
            self, message: Any, sender: Any, skip_head: bool = False
        ) -> None:
            self.shown.append(f"{sender.name}: {message}")

    bot = llm_agent("bot", fake_llm, Gui)
    user = agent("user")
    fake_llm.add_reply("fine")
    fake_llm.add_reply("fine again")
    with IOStream.set_default(IOScripted()) as io:
        user.initiate_chat(bot, message="how are you", max_turns=1)
    assert bot.shown == ["user: how are you"]
    assert "user (to bot)" not in io.text
    with IOStream.set_default(IOScripted()) as io:
        user.initiate_chat(bot, message="again", max_turns=1, silent=True)
    assert bot.shown == ["user: how are you"]


def test_print_received_message_renders_as_the_turn_does() -> None:
    a, b = agent("a"), agent("b")
    call = {
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    with IOStream.set_default(IOScripted()) as io:
        a._print_received_message(call, b)
        a._print_received_message("body", b, skip_head=True)
    assert io.printed[0].startswith("b (to a):\n\n***** Suggested tool call (c1): f *****")
    assert io.printed[1] == "body\n\n" + "-" * 80 + "\n"


# -- 18.6 _raise_exception_on_async_reply_functions ---------------------------------------------


async def async_reply(*args: Any, **kwargs: Any) -> tuple[bool, Any]:
    return False, None


async def other_async_reply(*args: Any, **kwargs: Any) -> tuple[bool, Any]:
    return False, None


def test_raise_exception_on_async_reply_functions() -> None:
    a = agent("a")
    a._raise_exception_on_async_reply_functions()  # the built-ins are exempt
    a.register_reply([Agent, None], async_reply, ignore_async_in_sync_chat=True)
    a._raise_exception_on_async_reply_functions()
    a.register_reply([Agent, None], async_reply)
    a.register_reply([Agent, None], other_async_reply)
    with pytest.raises(RuntimeError) as info:
        a._raise_exception_on_async_reply_functions()
    assert str(info.value) == (
        "Async reply functions can only be used with ConversableAgent.a_initiate_chat(). "
        "The following async reply functions are found: other_async_reply, async_reply"
    )


def test_group_chat_manager_also_checks_its_members() -> None:
    member, other = agent("member"), agent("other")
    manager = GroupChatManager(GroupChat([member, other], messages=[]), llm_config=False)
    manager._raise_exception_on_async_reply_functions()
    member.register_reply([Agent, None], async_reply)
    with pytest.raises(RuntimeError, match=r"found: async_reply$"):
        manager._raise_exception_on_async_reply_functions()


def test_sync_chats_still_run_async_reply_functions() -> None:
    """parley's deliberate difference (README): the check is not made by initiate_chat."""
    a, b = agent("a"), agent("b", max_consecutive_auto_reply=1)

    async def answer(*args: Any, **kwargs: Any) -> tuple[bool, str]:
        return True, "from async"

    b.register_reply([Agent, None], answer)
    result = a.initiate_chat(b, message="hi", max_turns=1, silent=True)
    assert [m["content"] for m in result.chat_history] == ["hi", "from async"]


def test_base_classes_pay_nothing_for_overridable_helpers(fake_llm: FakeLLMServer) -> None:
    """A plain agent's turn never reaches the helpers (the inline path), so an instance
    attribute shadowing one is not called: only a class that overrides them pays."""
    bot = llm_agent("bot", fake_llm)
    user = agent("user")
    calls: list[str] = []
    bot._append_oai_message = lambda *a, **k: calls.append("append")  # type: ignore[method-assign]
    fake_llm.add_reply("ok")
    user.initiate_chat(bot, message="hi", max_turns=1, silent=True)
    assert calls == []
    assert json.dumps(bot.chat_messages[user])
