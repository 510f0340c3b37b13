"""Every model call a chat causes is charged to the agent that made it and adds up in the chat.

One group chat exercises every kind of call: speaker selection (charged to the manager), the
members' replies, a tool that calls a model (charged to the agent running the tool), a nested
chat with its own reflection summary, and the outer chat's reflection summary. Each scripted
reply carries its own usage, so the totals can be checked exactly.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import pytest

from parley import ConversableAgent, GroupChat, GroupChatManager, OpenAIWrapper
from parley.agentchat import gather_usage_summary
from parley.io import IOScripted, IOStream
from parley.oai._cost import compute_cost
from parley.testing import FakeLLMServer
from parley.usage import Usage

PRICE = [0.0015, 0.002]  # USD per 1k prompt / completion tokens
MODEL = "priced-model"


def usage(i: int) -> dict[str, int]:
    """The usage scripted for the i-th request: distinct for every call."""
    return {"prompt_tokens": 100 * i + 7, "completion_tokens": 10 * i + 3}


def cost(i: int) -> float:
    u = usage(i)
    return compute_cost(MODEL, u["prompt_tokens"], u["completion_tokens"], PRICE)


def llm(server: FakeLLMServer) -> dict[str, Any]:
    return {"config_list": server.config_list(MODEL, price=PRICE)}


def build(server: FakeLLMServer) -> tuple[ConversableAgent, GroupChatManager]:
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    writer = ConversableAgent("writer", llm_config=llm(server), human_input_mode="NEVER")
    critic = ConversableAgent("critic", llm_config=llm(server), human_input_mode="NEVER")
    reviewer = ConversableAgent("reviewer", llm_config=False, human_input_mode="NEVER")
    inner = ConversableAgent("inner", llm_config=llm(server), human_input_mode="NEVER")

    @critic.register_for_execution()
    @writer.register_for_llm(description="Look a question up (asks a model).")
    def research(question: Annotated[str, "what to look up"]) -> str:
        # A tool that calls a model itself, with a client of its own and no agent= argument.
        client = OpenAIWrapper(config_list=server.config_list(MODEL, price=PRICE))
        answer = client.create(messages=[{"role": "user", "content": question}])
        return str(answer.choices[0].message.content)

    reviewer.register_nested_chats(
        [{"recipient": inner, "max_turns": 1, "summary_method": "reflection_with_llm"}],
        trigger=lambda sender: sender is not None and sender.name == "chat_manager",
    )
    group = GroupChat(
        [user, writer, critic, reviewer], messages=[], max_round=10, speaker_selection_method="auto"
    )
    manager = GroupChatManager(group, llm_config=llm(server))
    return user, manager


def script(server: FakeLLMServer) -> dict[str, list[int]]:
    """Queue the nine replies in the order the chat asks for them; which calls each agent
    makes. (After a tool call the agent that can run it speaks, without a selection.)"""
    replies: list[tuple[Any, dict[str, Any]]] = [
        ("writer", {}),  # 1 selection
        (None, {"tool_calls": [{"name": "research", "arguments": {"question": "q"}}]}),  # 2 writer
        ("found it", {}),  # 3 the tool's own call, made while the critic runs the tool
        ("reviewer", {}),  # 4 selection
        ("inner answer", {}),  # 5 inner's reply in the nested chat
        ("inner summary", {}),  # 6 the nested chat's reflection summary
        ("writer", {}),  # 7 selection
        ("TERMINATE", {}),  # 8 writer
        ("the summary", {}),  # 9 the outer chat's reflection summary
    ]
    for i, (content, extra) in enumerate(replies, start=1):
        server.add_reply(content, usage=usage(i), **extra)
    return {
        "chat_manager": [1, 4, 7, 9],
        "writer": [2, 8],
        "critic": [3],
        "inner": [5, 6],
    }


async def test_every_call_is_charged_to_its_agent_and_adds_up_in_the_chat(
    fake_llm: FakeLLMServer,
) -> None:
    user, manager = build(fake_llm)
    by_agent = script(fake_llm)
    with IOStream.set_default(IOScripted()):
        result = await user.a_initiate_chat(
            manager, message="task", summary_method="reflection_with_llm"
        )
    assert fake_llm.pending == 0
    assert result.summary == "the summary"
    assert result.termination_reason == "is_termination_msg"

    got = result.usage
    assert isinstance(got, Usage)
    every = range(1, 10)
    assert got.llm_calls == 9
    assert got.cached_calls == 0
    assert got.prompt_tokens == sum(usage(i)["prompt_tokens"] for i in every)
    assert got.completion_tokens == sum(usage(i)["completion_tokens"] for i in every)
    assert got.cost == math.fsum(cost(i) for i in every)
    assert result.cost == got.to_autogen()
    including = result.cost["usage_including_cached_inference"]
    assert including["total_cost"] == got.cost
    assert including[MODEL]["total_tokens"] == got.total_tokens

    split = got.by_agent()
    assert sorted(split) == sorted(by_agent)
    for name, calls in by_agent.items():
        assert split[name].llm_calls == len(calls), name
        assert split[name].cost == math.fsum(cost(i) for i in calls), name
    purposes = {p: u.llm_calls for p, u in got.by_purpose().items()}
    assert purposes == {"speaker_selection": 3, "reply": 3, "tool": 1, "summary": 2}
    # The nested chat is a chat of its own, inside this one.
    chats = got.by_chat()
    assert len(chats) == 2
    nested = next(u for chat_id, u in chats.items() if chat_id != result.run_id)
    assert nested.by_agent()["inner"].llm_calls == 2

    # AutoGen's gather_usage_summary keeps its meaning: the agents' own clients' totals, which
    # miss the tool's client, the nested chat and the members (and add up call by call, so
    # only approximately: the float sum depends on the order).
    autogen_view = gather_usage_summary([user, manager])
    assert autogen_view["usage_including_cached_inference"]["total_cost"] == pytest.approx(
        math.fsum(cost(i) for i in by_agent["chat_manager"]), rel=1e-12
    )


async def test_cached_answers_are_listed_but_cost_nothing(
    fake_llm: FakeLLMServer, tmp_path: Any
) -> None:
    from parley.cache import Cache

    fake_llm.add_reply("one", usage=usage(1))
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    bot = ConversableAgent("bot", llm_config=llm(fake_llm), human_input_mode="NEVER")
    with IOStream.set_default(IOScripted()), Cache.disk(cache_path_root=str(tmp_path)) as cache:
        first = await user.a_initiate_chat(bot, message="hi", max_turns=1, cache=cache)
        second = await user.a_initiate_chat(bot, message="hi", max_turns=1, cache=cache)
    assert first.usage is not None
    assert second.usage is not None
    assert (first.usage.llm_calls, first.usage.cached_calls) == (1, 0)
    assert (second.usage.llm_calls, second.usage.cached_calls) == (0, 1)
    assert second.usage.cost == 0
    assert second.usage.cost_including_cached == first.usage.cost == cost(1)
    assert second.cost == {
        "usage_including_cached_inference": {
            "total_cost": cost(1),
            MODEL: {
                "cost": cost(1),
                "prompt_tokens": usage(1)["prompt_tokens"],
                "completion_tokens": usage(1)["completion_tokens"],
                "total_tokens": sum(usage(1).values()),
            },
        },
        "usage_excluding_cached_inference": {"total_cost": 0},
    }
    both = Usage.of(first, second)
    assert both.llm_calls == 1
    assert both.cached_calls == 1


async def test_each_chat_reports_only_its_own_cost(fake_llm: FakeLLMServer) -> None:
    # AutoGen reported the agents' running totals; a second chat of the same agents would
    # include the first one's cost.
    fake_llm.add_reply("a", usage=usage(1)).add_reply("b", usage=usage(2))
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    bot = ConversableAgent("bot", llm_config=llm(fake_llm), human_input_mode="NEVER")
    with IOStream.set_default(IOScripted()):
        first = await user.a_initiate_chat(bot, message="hi", max_turns=1)
        second = await user.a_initiate_chat(bot, message="hi", max_turns=1)
    assert first.usage is not None
    assert second.usage is not None
    assert first.usage.cost == cost(1)
    assert second.usage.cost == cost(2)
    assert first.run_id != second.run_id
    assert gather_usage_summary([user, bot])["usage_including_cached_inference"][
        "total_cost"
    ] == cost(1) + cost(2)


def test_the_usage_tables(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("a", usage=usage(1)).add_reply("b", usage=usage(2))
    user = ConversableAgent(
        "user", llm_config=False, human_input_mode="NEVER", default_auto_reply="more"
    )
    bot = ConversableAgent("bot", llm_config=llm(fake_llm), human_input_mode="NEVER")
    with IOStream.set_default(IOScripted()):
        result = user.initiate_chat(bot, message="hi", max_turns=2)
    assert result.usage is not None
    table = result.usage.table("agent")
    rows = table.splitlines()
    assert rows[0].split() == [
        "agent",
        "calls",
        "cached",
        "prompt",
        "completion",
        "total",
        "cost",
        "(USD)",
    ]
    assert rows[2].split()[:2] == ["bot", "2"]
    assert rows[-1].split()[0] == "total"
    assert f"{cost(1) + cost(2):.6f}" in rows[-1]
    assert "model" in str(result.usage)
    assert MODEL in str(result.usage)
    assert result.usage.table("purpose").splitlines()[2].split()[0] == "reply"
