"""SocietyOfMindAgent: an inner group chat answered as one agent, on the fake server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from parley import ConversableAgent, GroupChat, GroupChatManager
from parley.agentchat.contrib.society_of_mind_agent import SocietyOfMindAgent
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

VARIANTS = pytest.mark.parametrize("variant", ["sync", "async"])


def plain(name: str, reply: str) -> ConversableAgent:
    return ConversableAgent(
        name, llm_config=False, human_input_mode="NEVER", default_auto_reply=reply
    )


def inner_team(*agents: ConversableAgent, max_round: int = 3) -> GroupChatManager:
    group = GroupChat(list(agents), [], max_round=max_round, speaker_selection_method="round_robin")
    return GroupChatManager(group, llm_config=False)


async def ask(variant: str, user: ConversableAgent, som: SocietyOfMindAgent, **kw: Any) -> Any:
    kw.setdefault("max_turns", 1)
    if variant == "async":
        return await user.a_initiate_chat(som, **kw)
    return await asyncio.to_thread(user.initiate_chat, som, **kw)


@VARIANTS
async def test_without_llm_the_reply_is_the_last_inner_message(variant: str) -> None:
    inner1, inner2 = plain("inner1", "thinking"), plain("inner2", "the answer is 4 TERMINATE")
    manager = inner_team(inner1, inner2)
    som = SocietyOfMindAgent("som", chat_manager=manager)
    user = plain("user", "unused")
    with IOStream.set_default(IOScripted()):
        result = await ask(variant, user, som, message="what is 2+2?")
    assert result.chat_history[-1]["content"] == "the answer is 4"
    assert result.chat_history[-1]["name"] == "som"
    assert [m["name"] for m in manager.groupchat.messages] == ["som", "inner1", "inner2"]
    assert manager.groupchat.messages[0]["content"] == "what is 2+2?"
    assert som.system_message == ""


@VARIANTS
async def test_default_preparer_asks_the_model(variant: str, fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("Four.")
    inner1 = plain("inner1", "Let me add 2 and 2.")
    inner2 = ConversableAgent(
        "inner2",
        llm_config=False,
        human_input_mode="NEVER",
        function_map=None,
        default_auto_reply="",
    )
    inner2.register_reply(
        [ConversableAgent, None],
        lambda agent, messages, sender, config: (
            True,
            {"content": None, "function_call": {"name": "add", "arguments": '{"a": 2}'}},
        ),
    )
    manager = inner_team(inner1, inner2)
    som = SocietyOfMindAgent("som", chat_manager=manager, llm_config=fake_llm.llm_config())
    user = plain("user", "unused")
    with IOStream.set_default(IOScripted()):
        result = await ask(variant, user, som, message="what is 2+2?")
    assert result.chat_history[-1]["content"] == "Four."
    (request,) = fake_llm.requests
    sent = request["messages"]
    assert sent[0]["role"] == "system"
    assert "transcript" in sent[0]["content"]
    assert [m["role"] for m in sent[1:-1]] == ["user", "user", "user"]
    assert [m["content"] for m in sent[1:-1]] == [
        "what is 2+2?",
        "Let me add 2 and 2.",
        'add({"a": 2})',
    ]
    assert all("function_call" not in m for m in sent)
    assert sent[-1]["role"] == "system"
    assert "stand on its own" in sent[-1]["content"]


@VARIANTS
async def test_custom_callable_preparer(variant: str) -> None:
    seen: list[list[str]] = []

    def prepare(agent: SocietyOfMindAgent, messages: list[dict[str, Any]]) -> str:
        seen.append([m["content"] for m in messages])
        return f"{agent.name} heard {len(messages)} messages"

    manager = inner_team(plain("a", "one"), plain("b", "two"))
    som = SocietyOfMindAgent("som", chat_manager=manager, response_preparer=prepare)
    with IOStream.set_default(IOScripted()):
        result = await ask(variant, plain("user", "x"), som, message="go")
    assert result.summary == "som heard 3 messages"
    assert seen == [["go", "one", "two"]]


async def test_async_custom_preparer() -> None:
    async def prepare(agent: SocietyOfMindAgent, messages: list[dict[str, Any]]) -> str:
        await asyncio.sleep(0)
        return messages[-1]["content"].upper()

    manager = inner_team(plain("a", "one"), plain("b", "two"))
    som = SocietyOfMindAgent("som", chat_manager=manager, response_preparer=prepare)
    with IOStream.set_default(IOScripted()):
        result = await ask("async", plain("user", "x"), som, message="go")
    assert result.summary == "TWO"


async def test_prompt_preparer_is_the_last_instruction(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("In short: two.")
    manager = inner_team(plain("a", "one"), plain("b", "two"))
    som = SocietyOfMindAgent(
        "som",
        chat_manager=manager,
        response_preparer="Answer in three words.",
        llm_config=fake_llm.llm_config(),
    )
    with IOStream.set_default(IOScripted()):
        result = await ask("sync", plain("user", "x"), som, message="go")
    assert result.summary == "In short: two."
    assert fake_llm.last_request["messages"][-1] == {
        "role": "system",
        "content": "Answer in three words.",
    }


async def test_members_start_from_the_outer_history() -> None:
    a, b = plain("a", "one"), plain("b", "two")
    manager = inner_team(a, b, max_round=2)
    som = SocietyOfMindAgent("som", chat_manager=manager)
    user = plain("user", "second question")
    with IOStream.set_default(IOScripted()):
        # Two outer turns: the second inner chat must see the first outer exchange.
        await user.a_initiate_chat(som, message="first question", max_turns=2)
    told = [(m.get("name"), m["content"]) for m in a.chat_messages[manager]]
    assert told[:2] == [("user", "first question"), ("som", "one")]
    # The new request opens the inner chat, spoken by the society-of-mind agent.
    assert told[2] == ("som", "second question")
    assert [m["content"] for m in manager.groupchat.messages] == ["second question", "one"]


async def test_inner_failure_still_answers(caplog: pytest.LogCaptureFixture) -> None:
    def boom(agent: Any, messages: Any, sender: Any, config: Any) -> Any:
        raise RuntimeError("inner agent broke")

    a, b = plain("a", "one"), plain("b", "two")
    b.register_reply([ConversableAgent, None], boom)
    manager = inner_team(a, b)
    som = SocietyOfMindAgent("som", chat_manager=manager)
    with IOStream.set_default(IOScripted()), caplog.at_level("ERROR"):
        result = await ask("async", plain("user", "x"), som, message="go")
    assert result.summary == "one"
    assert "inner group chat failed" in caplog.text
    assert "inner agent broke" in caplog.text


def test_reply_functions_and_manager() -> None:
    manager = inner_team(plain("a", "one"), plain("b", "two"))
    som = SocietyOfMindAgent("som", chat_manager=manager)
    names = [entry.func.__name__ for entry in som._reply_func_list]
    assert names == [
        "check_termination_and_human_reply",
        "generate_function_call_reply",
        "generate_code_execution_reply",
        "generate_inner_monologue_reply",
    ]
    assert som.chat_manager is manager
    assert som.llm_config is False
    som.update_chat_manager(None)
    assert som.chat_manager is None
    assert som.generate_inner_monologue_reply([{"content": "x", "role": "user"}]) == (False, None)


def test_manager_without_group_chat_fails_clearly() -> None:
    manager = inner_team(plain("a", "one"), plain("b", "two"))
    manager._reply_func_list.clear()
    som = SocietyOfMindAgent("som", chat_manager=manager)
    with pytest.raises(AttributeError, match="runs no GroupChat"):
        som.generate_inner_monologue_reply([{"content": "x", "role": "user"}])


def test_bad_preparer_type() -> None:
    manager = inner_team(plain("a", "one"), plain("b", "two"))
    with pytest.raises(TypeError, match="response_preparer"):
        SocietyOfMindAgent("som", chat_manager=manager, response_preparer=3)  # type: ignore[arg-type]


@VARIANTS
async def test_as_a_member_of_an_outer_group_chat(variant: str) -> None:
    inner_manager = inner_team(plain("a", "inner idea"), plain("b", "inner answer TERMINATE"))
    som = SocietyOfMindAgent("som", chat_manager=inner_manager)
    reviewer = plain("reviewer", "looks right")
    outer = GroupChat([som, reviewer], [], max_round=3, speaker_selection_method="round_robin")
    outer_manager = GroupChatManager(outer, llm_config=False)
    user = plain("user", "unused")
    with IOStream.set_default(IOScripted()):
        if variant == "async":
            await user.a_initiate_chat(outer_manager, message="question")
        else:
            await asyncio.to_thread(user.initiate_chat, outer_manager, message="question")
    assert [(m["name"], m["content"]) for m in outer.messages] == [
        ("user", "question"),
        ("som", "inner answer"),
        ("reviewer", "looks right"),
    ]
    # The inner chat opened with the outer question, told by the society-of-mind agent.
    assert [m["content"] for m in inner_manager.groupchat.messages][:1] == ["question"]
