"""Agent names the OpenAI API refuses as a message ``name`` are caught when a chat starts,
before any request is sent and before anything is stored, not after the first requests."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from parley import ConversableAgent, GroupChat, GroupChatManager
from parley.exceptions import InvalidAgentNameError
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

VARIANTS = pytest.mark.parametrize("variant", ["sync", "async"])


async def call(variant: str, obj: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    if variant == "async":
        return await getattr(obj, "a_" + method)(*args, **kwargs)
    return await asyncio.to_thread(getattr(obj, method), *args, **kwargs)


def plain(name: str, **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("human_input_mode", "NEVER")
    kwargs.setdefault("llm_config", False)
    return ConversableAgent(name, **kwargs)


def all_histories(*agents: ConversableAgent) -> list[Any]:
    return [m for agent in agents for history in agent.chat_messages.values() for m in history]


@VARIANTS
@pytest.mark.parametrize("bad_side", ["sender", "recipient"])
async def test_a_two_agent_chat_leaves_a_name_the_api_refuses_out_of_its_requests(
    variant: str, bad_side: str, fake_llm: FakeLLMServer
) -> None:
    """AutoGen's two-agent notebooks name agents "Player Black": the roles tell the two apart,
    so such a name is not sent (no refusal); the history keeps it, and valid names are sent."""
    fake_llm.add_reply("one")
    fake_llm.add_reply("two")
    sender = plain("user proxy" if bad_side == "sender" else "user")
    recipient = plain(
        "my assistant" if bad_side == "recipient" else "assistant",
        llm_config=fake_llm.llm_config(),
    )
    with IOStream.set_default(IOScripted()):
        result = await call(variant, sender, "initiate_chat", recipient, message="hi", max_turns=2)
    assert result.chat_history[1]["content"] == "one"
    assert len(fake_llm.requests) == 2
    assert result.chat_history[0]["name"] == sender.name  # stored as AutoGen stores it
    for request in fake_llm.requests:
        names = {m.get("name") for m in request["messages"]}
        assert not names & {"user proxy", "my assistant"}
        if bad_side == "recipient":
            assert "user" in names  # a name the API takes is still sent


@VARIANTS
async def test_names_do_not_matter_when_no_model_reads_them(variant: str) -> None:
    sender = plain("user proxy", default_auto_reply="ok")
    recipient = plain("my helper", default_auto_reply="fine")
    with IOStream.set_default(IOScripted()):
        result = await call(variant, sender, "initiate_chat", recipient, message="hi", max_turns=1)
    assert [m["content"] for m in result.chat_history] == ["hi", "fine"]


def group(fake_llm: FakeLLMServer, *, member: str, manager: str) -> tuple[Any, ...]:
    user = plain("user")
    writer = plain("writer", llm_config=fake_llm.llm_config())
    other = plain(member, default_auto_reply="noted")
    chat = GroupChat(
        agents=[user, writer, other], messages=[], speaker_selection_method="round_robin"
    )
    boss = GroupChatManager(chat, name=manager, llm_config=False)
    return user, writer, other, chat, boss


@VARIANTS
@pytest.mark.parametrize(
    ("member", "manager", "bad"),
    [("the critic", "chat_manager", "the critic"), ("critic", "chat manager", "chat manager")],
    ids=["member", "manager"],
)
async def test_group_chat_checks_every_name_first(
    variant: str, fake_llm: FakeLLMServer, member: str, manager: str, bad: str
) -> None:
    """Before the fix, a member's bad name surfaced only once a message from it was in an LLM
    member's request, several rounds (and requests) into the chat."""
    fake_llm.responder = lambda request: "draft"
    user, writer, other, chat, boss = group(fake_llm, member=member, manager=manager)
    chat.max_round = 8
    with IOStream.set_default(IOScripted()), pytest.raises(InvalidAgentNameError, match=repr(bad)):
        await call(variant, user, "initiate_chat", boss, message="write")
    assert fake_llm.requests == []
    assert chat.messages == []
    assert all_histories(user, writer, other, boss) == []


async def test_group_chat_with_only_a_selecting_manager_allows_any_member_name(
    fake_llm: FakeLLMServer,
) -> None:
    """The manager's model only picks speakers, from sanitized names: no member is refused."""
    fake_llm.responder = lambda request: "Data_Analyst"
    user = plain("the user")
    analyst = plain("Data Analyst", default_auto_reply="numbers")
    chat = GroupChat(agents=[user, analyst], messages=[], max_round=2)
    boss = GroupChatManager(chat, llm_config=fake_llm.llm_config())
    with IOStream.set_default(IOScripted()):
        await user.a_initiate_chat(boss, message="go")
    assert [m["content"] for m in chat.messages] == ["go", "numbers"]


def test_initiate_chats_of_two_agent_chats_accept_any_name(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda request: "answer"
    user = plain("user")
    good = plain("assistant", llm_config=fake_llm.llm_config())
    spaced = plain("second assistant", llm_config=fake_llm.llm_config())
    queue = [
        {"recipient": good, "message": "one", "max_turns": 1},
        {"recipient": spaced, "message": "two", "max_turns": 1},
    ]
    with IOStream.set_default(IOScripted()):
        results = user.initiate_chats(queue)
    assert [r.summary for r in results] == ["answer", "answer"]
    assert len(fake_llm.requests) == 2


@VARIANTS
async def test_a_nested_two_agent_chat_accepts_any_name(
    variant: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.responder = lambda request: "inner answer"
    user = plain("user")
    proxy = plain("proxy")
    inner = plain("inner assistant", llm_config=fake_llm.llm_config())
    proxy.register_nested_chats([{"recipient": inner, "max_turns": 1}], trigger=user)
    with IOStream.set_default(IOScripted()):
        result = await call(variant, user, "initiate_chat", proxy, message="hi", max_turns=1)
    assert result.chat_history[-1]["content"] == "inner answer"
