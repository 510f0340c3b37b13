"""Budgets end a chat cleanly at the right step, and every chat says why it ended."""

from __future__ import annotations

import time
from typing import Annotated, Any

import pytest

from parley import ConversableAgent, GroupChat, GroupChatManager, OpenAIWrapper
from parley.exceptions import BudgetExceededError
from parley.io import IOScripted, IOStream
from parley.oai._cost import compute_cost
from parley.testing import FakeLLMServer
from parley.usage import Budget

PRICE = [0.001, 0.002]
MODEL = "priced-model"
USAGE = {"prompt_tokens": 60, "completion_tokens": 40}  # 100 tokens a call
COST = compute_cost(MODEL, 60, 40, PRICE)


def llm(server: FakeLLMServer) -> dict[str, Any]:
    return {"config_list": server.config_list(MODEL, price=PRICE)}


def pair(server: FakeLLMServer, **bot: Any) -> tuple[ConversableAgent, ConversableAgent]:
    user = ConversableAgent(
        "user", llm_config=False, human_input_mode="NEVER", default_auto_reply="go on"
    )
    bot.setdefault("human_input_mode", "NEVER")
    return user, ConversableAgent("bot", llm_config=llm(server), **bot)


def replies(server: FakeLLMServer, n: int, **kwargs: Any) -> None:
    for i in range(n):
        server.add_reply(f"reply {i + 1}", usage=USAGE, **kwargs)


def contents(result: Any) -> list[Any]:
    return [m["content"] for m in result.chat_history]


@pytest.mark.parametrize(
    ("budget", "reason"),
    [
        (Budget(max_llm_calls=3), "budget:llm_calls"),
        (Budget(max_tokens=250), "budget:tokens"),  # reached by the third call (300)
        (Budget(max_cost=COST * 2.5), "budget:cost"),
    ],
)
async def test_a_spending_limit_ends_the_chat_after_the_step_that_reached_it(
    fake_llm: FakeLLMServer, budget: Budget, reason: str
) -> None:
    replies(fake_llm, 10)
    user, bot = pair(fake_llm)
    with IOStream.set_default(IOScripted()):
        result = await user.a_initiate_chat(bot, message="start", budget=budget)
    assert result.termination_reason == reason
    assert len(fake_llm.requests) == 3
    # Whole messages only, up to the bot's third reply: the step that reached the limit.
    assert contents(result) == ["start", "reply 1", "go on", "reply 2", "go on", "reply 3"]
    assert [m["content"] for m in bot.chat_messages[user]] == contents(result)  # both sides
    assert result.usage is not None
    assert result.usage.llm_calls == 3


async def test_max_llm_calls_is_never_crossed_even_by_a_summary(fake_llm: FakeLLMServer) -> None:
    replies(fake_llm, 10)
    user, bot = pair(fake_llm)
    with IOStream.set_default(IOScripted()):
        result = await user.a_initiate_chat(
            bot,
            message="start",
            budget=Budget(max_llm_calls=2),
            summary_method="reflection_with_llm",
        )
    assert len(fake_llm.requests) == 2
    assert result.termination_reason == "budget:llm_calls"
    assert result.summary == "reply 2"  # the last message stands in for the summary


async def test_a_time_limit_is_checked_before_each_turn(fake_llm: FakeLLMServer) -> None:
    replies(fake_llm, 10, delay=0.4)
    user, bot = pair(fake_llm)
    started = time.monotonic()
    with IOStream.set_default(IOScripted()):
        result = await user.a_initiate_chat(bot, message="start", budget=Budget(max_seconds=1.0))
    assert result.termination_reason == "budget:seconds"
    assert time.monotonic() - started >= 1.0
    # Three replies take at least 1.2 s, so the check before a fourth turn stops the chat
    # (without the check all ten would be asked for); on a slow machine it may stop sooner.
    assert 1 <= len(fake_llm.requests) <= 3


async def test_with_max_turns_the_chat_stops_at_the_budget_too(fake_llm: FakeLLMServer) -> None:
    replies(fake_llm, 10)
    user, bot = pair(fake_llm)
    with IOStream.set_default(IOScripted()):
        result = await user.a_initiate_chat(
            bot, message="start", max_turns=5, budget=Budget(max_llm_calls=2)
        )
    assert result.termination_reason == "budget:llm_calls"
    assert len(fake_llm.requests) == 2


def test_a_budget_works_in_sync_chats(fake_llm: FakeLLMServer) -> None:
    replies(fake_llm, 10)
    user, bot = pair(fake_llm)
    with IOStream.set_default(IOScripted()):
        result = user.initiate_chat(bot, message="start", budget=Budget(max_llm_calls=1))
    assert result.termination_reason == "budget:llm_calls"
    assert contents(result) == ["start", "reply 1"]


async def test_a_group_chat_managers_budget(fake_llm: FakeLLMServer) -> None:
    # Every request is a selection ("a" or "b") or a member's reply; three calls are allowed.
    for answer in ["a", "reply a", "b", "reply b", "a", "reply a2"]:
        fake_llm.add_reply(answer, usage=USAGE)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    a = ConversableAgent("a", llm_config=llm(fake_llm), human_input_mode="NEVER")
    b = ConversableAgent("b", llm_config=llm(fake_llm), human_input_mode="NEVER")
    group = GroupChat([user, a, b], messages=[], max_round=20, speaker_selection_method="auto")
    manager = GroupChatManager(group, llm_config=llm(fake_llm), budget=Budget(max_llm_calls=3))
    with IOStream.set_default(IOScripted()):
        result = await user.a_initiate_chat(manager, message="go")
    # selection, a's reply, selection of b: b's turn finds the budget spent and says nothing.
    assert len(fake_llm.requests) == 3
    assert result.termination_reason == "budget:llm_calls"
    assert [m["content"] for m in group.messages] == ["go", "reply a"]
    with pytest.raises(TypeError, match=r"parley\.usage\.Budget"):
        GroupChatManager(group, budget={"max_cost": 1})  # type: ignore[arg-type]


async def test_a_chats_budget_covers_its_nested_chats(fake_llm: FakeLLMServer) -> None:
    replies(fake_llm, 10)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    front = ConversableAgent("front", llm_config=False, human_input_mode="NEVER")
    inner = ConversableAgent("inner", llm_config=llm(fake_llm), human_input_mode="NEVER")
    front.register_nested_chats(
        [{"recipient": inner, "max_turns": 3, "summary_method": "last_msg"}], trigger=user
    )
    with IOStream.set_default(IOScripted()):
        result = await user.a_initiate_chat(
            front, message="task", max_turns=3, budget=Budget(max_llm_calls=2)
        )
    # The nested chat's inner agent spends the outer chat's two calls; both chats stop.
    assert len(fake_llm.requests) == 2
    assert result.termination_reason == "budget:llm_calls"
    assert result.usage is not None
    assert result.usage.by_agent()["inner"].llm_calls == 2


async def test_a_tool_that_asks_a_model_past_the_budget_ends_the_turn(
    fake_llm: FakeLLMServer,
) -> None:
    fake_llm.add_reply(None, tool_calls=[{"name": "ask", "arguments": {"q": "x"}}], usage=USAGE)
    replies(fake_llm, 5)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    bot = ConversableAgent("bot", llm_config=llm(fake_llm), human_input_mode="NEVER")

    @user.register_for_execution()
    @bot.register_for_llm(description="Ask a model.")
    def ask(q: Annotated[str, "the question"]) -> str:
        client = OpenAIWrapper(config_list=fake_llm.config_list(MODEL, price=PRICE))
        return str(
            client.create(messages=[{"role": "user", "content": q}]).choices[0].message.content
        )

    with IOStream.set_default(IOScripted()):
        result = await user.a_initiate_chat(
            bot, message="use the tool", budget=Budget(max_llm_calls=1)
        )
    assert len(fake_llm.requests) == 1
    assert result.termination_reason == "budget:llm_calls"
    # The refused tool left no error message behind: the turn ended unanswered.
    assert [m.get("tool_calls") is not None for m in result.chat_history] == [False, True]


def test_a_request_outside_a_chat_is_never_refused(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    assert (
        client.create(messages=[{"role": "user", "content": "hi"}]).choices[0].message.content
        == "ok"
    )


def test_budget_error_names_the_reason() -> None:
    error = BudgetExceededError("budget:cost", "abc")
    assert "budget:cost" in str(error)
    assert error.chat_id == "abc"


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"max_cost": -1}, ValueError),
        ({"max_cost": "1"}, TypeError),
        ({"max_tokens": 1.5}, TypeError),
        ({"max_llm_calls": True}, TypeError),
        ({"max_seconds": float("nan")}, ValueError),
    ],
)
def test_a_bad_budget_is_refused_when_made(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error, match=next(iter(kwargs))):
        Budget(**kwargs)


async def test_initiate_chat_refuses_a_budget_that_is_not_one(fake_llm: FakeLLMServer) -> None:
    user, bot = pair(fake_llm)
    with pytest.raises(TypeError, match=r"parley\.usage\.Budget"):
        await user.a_initiate_chat(bot, message="x", budget={"max_cost": 1})
    assert fake_llm.requests == []


# -- termination reasons --------------------------------------------------------------------


async def test_termination_reasons_of_two_agent_chats(fake_llm: FakeLLMServer) -> None:
    def ended(result: Any) -> str:
        return str(result.termination_reason)

    with IOStream.set_default(IOScripted(["exit"])):
        a = ConversableAgent(
            "a", llm_config=False, human_input_mode="NEVER", default_auto_reply="x"
        )
        b = ConversableAgent(
            "b",
            llm_config=False,
            human_input_mode="NEVER",
            default_auto_reply="y",
            max_consecutive_auto_reply=2,
        )
        assert ended(await a.a_initiate_chat(b, message="hi", max_turns=2)) == "max_turns"
        assert ended(await a.a_initiate_chat(b, message="hi")) == "max_consecutive_auto_reply"
        c = ConversableAgent(
            "c", llm_config=False, human_input_mode="NEVER", default_auto_reply="TERMINATE"
        )
        assert ended(await a.a_initiate_chat(c, message="hi")) == "is_termination_msg"
        human = ConversableAgent("h", llm_config=False, human_input_mode="ALWAYS")
        assert ended(await human.a_initiate_chat(b, message="hi")) == "human_exit"
        quiet = ConversableAgent("q", llm_config=False, human_input_mode="NEVER")
        quiet.register_reply([ConversableAgent, None], lambda *a, **k: (True, None), position=0)
        assert ended(await a.a_initiate_chat(quiet, message="hi")) == "no_reply"


async def test_termination_reasons_of_group_chats() -> None:
    def member(name: str, reply: str) -> ConversableAgent:
        return ConversableAgent(
            name, llm_config=False, human_input_mode="NEVER", default_auto_reply=reply
        )

    user, a, b = member("user", "u"), member("a", "from a"), member("b", "TERMINATE")
    with IOStream.set_default(IOScripted()):
        group = GroupChat(
            [user, a], messages=[], max_round=3, speaker_selection_method="round_robin"
        )
        result = await user.a_initiate_chat(GroupChatManager(group), message="go")
        assert result.termination_reason == "max_round"
        group = GroupChat(
            [user, a, b], messages=[], max_round=9, speaker_selection_method="round_robin"
        )
        result = await user.a_initiate_chat(GroupChatManager(group), message="go")
        assert result.termination_reason == "is_termination_msg"
        group = GroupChat(
            [user, a], messages=[], max_round=9, speaker_selection_method=lambda last, g: None
        )
        result = await user.a_initiate_chat(GroupChatManager(group), message="go")
        assert result.termination_reason == "no_eligible_speaker"


async def test_a_nested_chat_with_a_budget_of_its_own(fake_llm: FakeLLMServer) -> None:
    replies(fake_llm, 10)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    front = ConversableAgent("front", llm_config=False, human_input_mode="NEVER")
    inner = ConversableAgent("inner", llm_config=llm(fake_llm), human_input_mode="NEVER")
    front.register_nested_chats(
        [{"recipient": inner, "max_turns": 5, "budget": Budget(max_llm_calls=2)}], trigger=user
    )
    with IOStream.set_default(IOScripted()):
        result = await user.a_initiate_chat(front, message="task", max_turns=1)
    # The nested chat stopped at its own limit; the outer chat went on to its turn limit.
    assert len(fake_llm.requests) == 2
    assert result.termination_reason == "max_turns"
    assert result.chat_history[-1]["content"] == "reply 2"


def test_queued_chats_each_with_a_budget(fake_llm: FakeLLMServer) -> None:
    replies(fake_llm, 10)
    user, bot = pair(fake_llm)
    with IOStream.set_default(IOScripted()):
        results = user.initiate_chats(
            [
                {"recipient": bot, "message": "one", "budget": Budget(max_llm_calls=1)},
                {"recipient": bot, "message": "two", "budget": Budget(max_llm_calls=2)},
            ]
        )
    assert [r.termination_reason for r in results] == ["budget:llm_calls"] * 2
    assert [r.usage.llm_calls for r in results if r.usage is not None] == [1, 2]
