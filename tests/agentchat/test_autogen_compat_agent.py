"""AutoGen 0.2 code that customises a ConversableAgent the AutoGen way runs unchanged: AutoGen's
behaviour (the spec, part 1, sections 2.4, 2.14 and 2.16) is the expectation."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import parley as autogen
from parley import Agent, ConversableAgent, UserProxyAgent
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer


def quiet(name: str, **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("llm_config", False)
    kwargs.setdefault("human_input_mode", "NEVER")
    return ConversableAgent(name, **kwargs)


# -- reply functions ---------------------------------------------------------------------------


def test_a_reply_function_may_return_a_list_pair() -> None:
    agent, other = quiet("a"), quiet("b", max_consecutive_auto_reply=0)
    agent.register_reply([Agent, None], lambda r, messages, sender, config: [True, "from a list"])
    with IOStream.set_default(IOScripted()):
        other.initiate_chat(agent, message="hi", max_turns=1)
    assert other.last_message(agent)["content"] == "from a list"
    agent.register_reply([Agent, None], lambda r, messages, sender, config: "not a pair")
    with pytest.raises(TypeError, match="must return"):
        agent.generate_reply([{"role": "user", "content": "x"}], sender=None)


# -- hooks -------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["sync", "async"])
def test_the_hooks_text_is_what_the_model_answers(variant: str, fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    assistant = autogen.AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    if variant == "sync":
        assistant.register_hook("process_last_received_message", lambda text: text + " [hooked]")
    else:

        async def hook(text: str) -> str:
            return text + " [hooked]"

        assistant.register_hook("a_process_last_received_message", hook)
    run = user.initiate_chat if variant == "sync" else None
    if run is not None:
        run(assistant, message="hello", max_turns=1, silent=True)
    else:
        asyncio.run(user.a_initiate_chat(assistant, message="hello", max_turns=1, silent=True))
    assert fake_llm.requests[0]["messages"][-1]["content"] == "hello [hooked]"


def test_process_last_received_message_is_public_and_overridable() -> None:
    agent = quiet("a")
    agent.register_hook("process_last_received_message", lambda text: text + "!")
    messages = [{"role": "user", "content": "x"}]
    assert agent.process_last_received_message(messages) == [{"role": "user", "content": "x!"}]
    assert messages == [{"role": "user", "content": "x"}]
    assert agent.process_all_messages_before_reply(messages) == messages

    class Tagging(ConversableAgent):
        def process_last_received_message(self, messages: Any) -> Any:
            messages = super().process_last_received_message(messages)
            return [*messages[:-1], {**messages[-1], "content": messages[-1]["content"] + " [sub]"}]

    tagging = Tagging("t", llm_config=False, human_input_mode="NEVER")
    tagging.register_hook("process_last_received_message", lambda text: text + "!")
    tagging.register_reply(
        [Agent, None], lambda r, messages, sender, config: (True, messages[-1]["content"])
    )
    assert tagging.generate_reply(messages) == "x! [sub]"
    assert asyncio.run(tagging.a_generate_reply(messages)) == "x! [sub]"


def test_a_hook_of_the_other_kind_warns_as_in_autogen() -> None:
    agent = quiet("a")

    async def a_hook(text: str) -> str:
        return text

    def s_hook(text: str) -> str:
        return text

    with pytest.warns(
        UserWarning, match="Hook 'a_hook' is asynchronous, but it's being registered"
    ):
        agent.register_hook("process_last_received_message", a_hook)
    with pytest.warns(UserWarning, match="Hook 's_hook' is synchronous, but it's being registered"):
        agent.register_hook("a_process_last_received_message", s_hook)
    # parley runs both in either kind of chat (README): the warning is AutoGen's, kept.
    assert agent.generate_reply([{"role": "user", "content": "x"}]) == ""


def test_registering_a_function_twice_warns(fake_llm: FakeLLMServer) -> None:
    agent = ConversableAgent("jtoy", llm_config=fake_llm.llm_config())

    def sample_function() -> None:
        pass

    agent.register_function({"sample_function": sample_function})
    agent.update_function_signature({"name": "foo"}, is_remove=False)
    agent.update_tool_signature({"type": "function", "function": {"name": "yo"}}, is_remove=False)
    with pytest.warns(UserWarning, match="Function 'sample_function' is being overridden."):
        agent.register_function({"sample_function": sample_function})
    with pytest.warns(UserWarning, match="Function 'foo' is being overridden."):
        agent.update_function_signature({"name": "foo"}, is_remove=False)
    with pytest.warns(UserWarning, match="Function 'yo' is being overridden."):
        agent.update_tool_signature(
            {"type": "function", "function": {"name": "yo"}}, is_remove=False
        )


# -- function and tool calls -------------------------------------------------------------------


def pair(arg1: str, arg2: str) -> str:
    return f"pair: {arg1} {arg2}"


async def a_pair(arg1: str, arg2: str) -> str:
    return f"pair: {arg1} {arg2}"


def broken(arg1: str, arg2: str) -> str:
    raise RuntimeError("it broke")


FUNCTION_CALL = {
    "role": "assistant",
    "content": None,
    "function_call": {"name": "pair", "arguments": json.dumps({"arg1": "a", "arg2": "b"})},
}
TOOL_CALLS = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "1", "type": "function", "function": FUNCTION_CALL["function_call"]},
        {"id": "2", "type": "function", "function": {"name": "other", "arguments": "{}"}},
    ],
}


@pytest.mark.parametrize("func", [pair, a_pair], ids=["sync-function", "async-function"])
@pytest.mark.parametrize("variant", ["sync", "async"])
def test_function_and_tool_call_replies_answer_as_autogen(variant: str, func: Any) -> None:
    agent = quiet("agent")

    def reply(kind: str, message: Any) -> Any:
        if variant == "sync":
            return getattr(agent, f"generate_{kind}_reply")([message])
        return asyncio.run(getattr(agent, f"a_generate_{kind}_reply")([message]))

    with IOStream.set_default(IOScripted()):
        assert reply("function_call", FUNCTION_CALL) == (
            True,
            {"name": "pair", "role": "function", "content": "Error: Function pair not found."},
        )
        agent._function_map = {"pair": func}
        for _ in range(2):
            assert reply("function_call", FUNCTION_CALL) == (
                True,
                {"name": "pair", "role": "function", "content": "pair: a b"},
            )
        assert reply("function_call", TOOL_CALLS) == (False, None)
        assert reply("tool_calls", FUNCTION_CALL) == (False, None)
        assert reply("tool_calls", TOOL_CALLS) == (
            True,
            {
                "role": "tool",
                "tool_responses": [
                    {"tool_call_id": "1", "role": "tool", "content": "pair: a b"},
                    {
                        "tool_call_id": "2",
                        "role": "tool",
                        "content": "Error: Function other not found.",
                    },
                ],
                "content": "pair: a b\n\nError: Function other not found.",
            },
        )
        agent._function_map = {"pair": broken}
        assert reply("function_call", FUNCTION_CALL) == (
            True,
            {"name": "pair", "role": "function", "content": "Error: it broke"},
        )
        agent._function_map = {"pair": func}
        assert agent.generate_reply([FUNCTION_CALL]) == {
            "name": "pair",
            "role": "function",
            "content": "pair: a b",
        }


class Collector(Agent):
    """A bare Agent subclass, as AutoGen's own tests write one: only ``receive``."""

    def __init__(self, name: str) -> None:
        self._name = name
        self.received: list[Any] = []
        self.silent = False

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._name

    def receive(
        self, message: Any, sender: Any, request_reply: Any = None, silent: Any = False
    ) -> None:
        self.received.append(message)


class AsyncCollector(Collector):
    async def a_receive(
        self, message: Any, sender: Any, request_reply: Any = None, silent: Any = False
    ) -> str:
        self.received.append(message)
        return ""


@pytest.mark.parametrize("variant", ["sync", "async"])
def test_several_tool_calls_answered_to_a_custom_agent(variant: str) -> None:
    user = UserProxyAgent("user_proxy", human_input_mode="NEVER", code_execution_config=False)
    user.register_function({"echo": lambda str: str})
    message = {
        "content": "calls",
        "tool_calls": [
            {
                "id": "t1",
                "type": "function",
                "function": {"name": "echo", "arguments": '{"str": "hi"}'},
            },
            {
                "id": "t2",
                "type": "function",
                "function": {"name": "echo", "arguments": '{"str": "bye"}'},
            },
        ],
    }
    with IOStream.set_default(IOScripted()):
        if variant == "sync":
            other: Collector = Collector("fake")
            user.receive(message, other, True)
        else:
            other = AsyncCollector("fake")
            asyncio.run(user.a_receive(message, other, True))
    assert other.received == [
        {
            "role": "tool",
            "tool_responses": [
                {"tool_call_id": "t1", "role": "tool", "content": "hi"},
                {"tool_call_id": "t2", "role": "tool", "content": "bye"},
            ],
            "content": "hi\n\nbye",
        }
    ]


def test_a_sync_only_agent_subclass_receives_what_is_sent() -> None:
    collector = Collector("collector")
    with IOStream.set_default(IOScripted()):
        quiet("a").send("hello", collector)
    assert collector.received == ["hello"]  # the message as sent, as AutoGen delivers it


# -- names ---------------------------------------------------------------------------------------


def test_names_with_spaces_work_in_a_two_agent_chat(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("e4")
    white = ConversableAgent(
        "Player White", llm_config=fake_llm.llm_config(), human_input_mode="NEVER"
    )
    black = ConversableAgent("Player Black", llm_config=False, human_input_mode="NEVER")
    with IOStream.set_default(IOScripted()):
        result = black.initiate_chat(white, message="Your move.", max_turns=1)
    assert result.summary == "e4"
    assert fake_llm.requests[0]["messages"][1] == {"role": "user", "content": "Your move."}
