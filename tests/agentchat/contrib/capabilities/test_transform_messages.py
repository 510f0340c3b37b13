"""TransformMessages (website/docs/tutorial/long-contexts.md), on agents in sync and async
chats."""

from __future__ import annotations

import copy
import re
from typing import Annotated, Any

import pytest

from parley import AssistantAgent, ConversableAgent, UserProxyAgent
from parley.agentchat.contrib.capabilities import (
    AgentCapability,
    MessageHistoryLimiter,
    MessageTokenLimiter,
    TransformMessages,
    agent_capability,
    transform_messages,
    transforms,
)
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from ..._spec_support import VARIANTS, call
from ._histories import pairing_errors

SYSTEM = {"role": "system", "content": "be brief"}
M = [{"role": ("user", "assistant")[i % 2], "content": f"m{i}"} for i in range(5)]


def plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_names_come_from_the_modules_and_the_package() -> None:
    assert transform_messages.TransformMessages is TransformMessages
    assert transforms.MessageHistoryLimiter is MessageHistoryLimiter
    assert agent_capability.AgentCapability is AgentCapability


def test_agent_capability_base() -> None:
    with pytest.raises(NotImplementedError):
        AgentCapability().add_to_agent(ConversableAgent("a", llm_config=False))
    assert not isinstance(TransformMessages(), AgentCapability)  # as in AutoGen


def test_one_hook_and_only_once() -> None:
    agent = ConversableAgent("a", llm_config=False)
    capability = TransformMessages(transforms=[MessageHistoryLimiter(2)])
    capability.add_to_agent(agent)
    assert agent._hooks.at("process_all_messages_before_reply") == [capability._transform_messages]
    with pytest.raises(AssertionError):
        capability.add_to_agent(agent)


def test_the_system_message_is_kept_and_the_log_printed() -> None:
    capability = TransformMessages(transforms=[MessageHistoryLimiter(2)])
    console = IOScripted()
    with IOStream.set_default(console):
        out = capability._transform_messages([SYSTEM, *M])
    assert out == [SYSTEM, M[3], M[4]]
    assert plain(console.text) == "Removed 3 messages. Number of messages reduced from 5 to 2.\n"


def test_quiet_and_no_effect_print_nothing() -> None:
    console = IOScripted()
    with IOStream.set_default(console):
        TransformMessages(transforms=[MessageHistoryLimiter(2)], verbose=False)._transform_messages(
            M
        )
        TransformMessages(transforms=[MessageHistoryLimiter(9)])._transform_messages(M)
    assert console.text == ""


def test_empty_and_roleless_histories_raise_as_in_autogen() -> None:
    with pytest.raises(IndexError):
        TransformMessages()._transform_messages([])
    with pytest.raises(KeyError):
        TransformMessages()._transform_messages([{"content": "x"}])


def test_order_matters() -> None:
    messages = [
        {"role": "user", "content": f"{w} beta gamma delta"}
        for w in ("one", "two", "three", "four")
    ]
    history = MessageHistoryLimiter(2, keep_first_message=True)
    tokens = MessageTokenLimiter(max_tokens=6)
    history_first = TransformMessages(transforms=[history, tokens], verbose=False)
    tokens_first = TransformMessages(transforms=[tokens, history], verbose=False)
    assert [m["content"] for m in history_first._transform_messages(messages)] == [
        "one beta",
        "four beta gamma delta",
    ]
    assert [m["content"] for m in tokens_first._transform_messages(messages)] == [
        "three beta",
        "four beta gamma delta",
    ]


class Shout:
    """A user-written transform (the MessageTransform protocol) that edits what it is given."""

    def apply_transform(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for m in messages:
            m["content"] = str(m["content"]).upper()
        return messages

    def get_logs(self, pre: list[dict[str, Any]], post: list[dict[str, Any]]) -> tuple[str, bool]:
        return f"shouted {pre[-1]['content']} as {post[-1]['content']}", True


def test_a_user_transform_gets_a_copy_it_may_edit() -> None:
    messages = copy.deepcopy(M)
    console = IOScripted()
    with IOStream.set_default(console):
        out = TransformMessages(transforms=[MessageHistoryLimiter(2), Shout()])._transform_messages(
            messages
        )
    assert [m["content"] for m in out] == ["M3", "M4"]
    assert messages == M
    assert plain(console.text).splitlines()[-1] == "shouted m4 as M4"


def test_the_result_is_a_new_list() -> None:
    out = TransformMessages(transforms=[MessageHistoryLimiter(9)])._transform_messages(M)
    assert out == M
    assert out is not M


# -- on agents ---------------------------------------------------------------------------------


@VARIANTS
async def test_transforms_apply_in_sync_and_async_chats(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    # AutoGen's hooks were sync-only, so capabilities did nothing in a_initiate_chat.
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent(
        "user", human_input_mode="NEVER", code_execution_config=False, max_consecutive_auto_reply=3
    )
    TransformMessages(transforms=[MessageHistoryLimiter(3)], verbose=False).add_to_agent(assistant)

    @user.register_for_execution()
    @assistant.register_for_llm(description="Look something up.")
    def lookup(query: Annotated[str, "what to look up"]) -> str:
        return f"facts about {query}"

    for n in range(3):
        fake_llm.add_reply(tool_calls=[{"name": "lookup", "arguments": {"query": f"q{n}"}}])
    fake_llm.add_reply("done")
    with IOStream.set_default(IOScripted()):
        await call(variant, user, "initiate_chat", assistant, message="research this")
    roles = [[m["role"] for m in r["messages"]] for r in fake_llm.requests]
    assert roles == [
        ["system", "user"],
        ["system", "user", "assistant", "tool"],
        # The history limiter keeps the newest call and its result, never one without the other.
        ["system", "assistant", "tool"],
        ["system", "assistant", "tool"],
    ]
    for request in fake_llm.requests:
        assert not pairing_errors(request["messages"])
    # The stored history is untouched.
    assert len(assistant.chat_messages[user]) == 8
