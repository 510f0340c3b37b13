"""Chat queues: ``initiate_chats`` (in order) and ``a_initiate_chats`` (by prerequisites)."""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

import pytest

import parley
from parley import ChatResult, ConversableAgent
from parley.agentchat.chat import a_initiate_chats, initiate_chats
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from ._spec_support import VARIANTS, call


def agent(name: str, **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("human_input_mode", "NEVER")
    kwargs.setdefault("default_auto_reply", f"{name}-reply")
    return ConversableAgent(name, **kwargs)


def first_messages(*agents: ConversableAgent) -> list[Any]:
    return [next(iter(a.chat_messages.values()))[0]["content"] for a in agents]


async def run_queue(variant: str, queue: list[dict[str, Any]]) -> Any:
    if variant == "async":
        return await a_initiate_chats(queue)
    return await asyncio.to_thread(initiate_chats, queue)


# -- initiate_chats ------------------------------------------------------------------------


def test_the_second_chat_carries_the_first_summary() -> None:
    a, b, c = agent("A"), agent("B"), agent("C")
    queue = [
        {"sender": a, "recipient": b, "message": "task1", "max_turns": 1},
        {"sender": a, "recipient": c, "message": "task2", "max_turns": 1},
    ]
    io = IOScripted()
    with IOStream.set_default(io):
        results = parley.initiate_chats(queue)
    assert [r.summary for r in results] == ["B-reply", "C-reply"]
    assert all(isinstance(r, ChatResult) and r.chat_id is None for r in results)
    assert first_messages(b, c) == ["task1", "task2\nContext: \nB-reply"]
    assert io.text.count("Starting a new chat....") == 2
    assert io.text.count("*" * 80) == 4


def test_the_callers_queue_is_not_modified_and_can_run_again() -> None:
    a, b, c = agent("A"), agent("B"), agent("C")
    queue = [
        {"sender": a, "recipient": b, "message": "task1", "max_turns": 1, "carryover": "given"},
        {"sender": a, "recipient": c, "message": "task2", "max_turns": 1},
    ]
    before = copy.copy(queue), [dict(e) for e in queue]
    with IOStream.set_default(IOScripted()):
        initiate_chats(queue)
        initiate_chats(queue)
    assert queue == before[1]
    assert all(x is y for x, y in zip(queue, before[0], strict=True))
    assert first_messages(b, c) == ["task1\nContext: \ngiven", "task2\nContext: \nB-reply"]


def test_own_carryover_comes_before_earlier_summaries_and_exclusions_use_positions() -> None:
    a, b, c, d = agent("A"), agent("B"), agent("C"), agent("D")
    queue = [
        {"sender": a, "recipient": b, "message": "one", "max_turns": 1},
        {"sender": a, "recipient": c, "message": "two", "max_turns": 1},
        {
            "sender": a,
            "recipient": d,
            "message": "three",
            "max_turns": 1,
            "carryover": ["mine", {"content": "as dict"}],
            "finished_chat_indexes_to_exclude_from_carryover": [0],
        },
    ]
    with IOStream.set_default(IOScripted()):
        initiate_chats(queue)
    assert first_messages(d) == ["three\nContext: \nmine\nas dict\nC-reply"]


def test_a_callable_message_sees_the_queue_context() -> None:
    a, b, c = agent("A"), agent("B"), agent("C")
    seen: dict[str, Any] = {}

    def message(sender: Any, recipient: Any, context: dict[str, Any]) -> str:
        seen.update(context)
        return f"from {sender.name} with {context['carryover']}"

    queue = [
        {"sender": a, "recipient": b, "message": "one", "max_turns": 1},
        {"sender": a, "recipient": c, "message": message, "max_turns": 1, "topic": "x"},
    ]
    with IOStream.set_default(IOScripted()):
        initiate_chats(queue)
    assert seen["carryover"] == ["B-reply"]
    assert seen["sender"] is a
    assert seen["topic"] == "x"
    assert first_messages(c) == ["from A with ['B-reply']"]


def test_verbose_and_silent_headers() -> None:
    a, b, c = agent("A"), agent("B"), agent("C")

    def make(sender: Any, recipient: Any, context: Any) -> str:
        return "made"

    queue = [
        {
            "sender": a,
            "recipient": b,
            "message": "one",
            "max_turns": 1,
            "verbose": True,
            "carryover": ["x", "y"],
        },
        {"sender": a, "recipient": c, "message": make, "max_turns": 1, "verbose": True},
        {"sender": a, "recipient": c, "message": {"content": "d"}, "max_turns": 1, "silent": True},
    ]
    io = IOScripted()
    with IOStream.set_default(io):
        initiate_chats(queue)
    assert "Message:\none\n" in io.text
    assert "Carryover:\nx\ny\n" in io.text
    assert "Message:\nCallable: make\n" in io.text
    assert "Carryover:\nB-reply\n" in io.text
    assert io.text.count("Starting a new chat") == 2
    assert "(to C)" in io.text
    assert "\nd\n" not in io.text


def test_invalid_queues() -> None:
    a, b = agent("A"), agent("B")
    with pytest.raises(AssertionError, match="sender must be provided"):
        initiate_chats([{"recipient": b, "message": "x"}])
    with pytest.raises(AssertionError, match="recipient must be provided"):
        initiate_chats([{"sender": a, "message": "x"}])
    with pytest.raises(AssertionError, match="summary_method"):
        initiate_chats([{"sender": a, "recipient": b, "message": "x", "summary_method": "nope"}])
    with pytest.raises(TypeError, match="list of dicts"):
        initiate_chats("chat")  # type: ignore[arg-type]


def test_queue_warnings_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    a, b = agent("A"), agent("B")
    queue = [
        {"sender": a, "recipient": b, "message": "x", "max_turns": 1},
        {"sender": a, "recipient": b, "max_turns": 1},
    ]
    with IOStream.set_default(IOScripted(["typed"])), caplog.at_level(logging.WARNING):
        initiate_chats(queue)
    assert "Repetitive recipients" in caplog.text
    assert "message is not provided in chat_queue[1]" in caplog.text
    assert first_messages(b) == ["typed\nContext: \nB-reply"]


@VARIANTS
async def test_the_agent_method_fills_the_sender(variant: str) -> None:
    a, b, c = agent("A"), agent("B"), agent("C")
    queue = [
        {"recipient": b, "message": "one", "max_turns": 1, "chat_id": 1},
        {"recipient": c, "message": "two", "max_turns": 1, "chat_id": 2, "prerequisites": [1]},
    ]
    with IOStream.set_default(IOScripted()):
        results = await call(variant, a, "initiate_chats", queue)
    assert "sender" not in queue[0]
    if variant == "async":
        assert list(results) == [1, 2]
        assert a.get_chat_results(2).summary == "C-reply"
    else:
        assert [r.summary for r in results] == ["B-reply", "C-reply"]
        assert a.get_chat_results(1).summary == "C-reply"
    assert a.get_chat_results() is results
    assert first_messages(c) == ["two\nContext: \nB-reply"]
    with pytest.raises(AttributeError):
        b.get_chat_results()


def test_a_subclass_initiate_chat_override_is_used() -> None:
    class Counting(ConversableAgent):
        count = 0

        def initiate_chat(self, recipient: Any, **kwargs: Any) -> ChatResult:  # type: ignore[override]
            Counting.count += 1
            return super().initiate_chat(recipient, **kwargs)

    a, b = Counting("A", human_input_mode="NEVER"), agent("B")
    with IOStream.set_default(IOScripted()):
        a.initiate_chats([{"recipient": b, "message": "x", "max_turns": 1}])
    assert Counting.count == 1


# -- a_initiate_chats ------------------------------------------------------------------------


async def test_results_are_keyed_by_chat_id(fake_llm: FakeLLMServer) -> None:
    a, b, c = agent("A"), agent("B"), agent("C")
    queue = [
        {"sender": a, "recipient": b, "message": "one", "max_turns": 1, "chat_id": 7},
        {
            "sender": a,
            "recipient": c,
            "message": "two",
            "max_turns": 1,
            "chat_id": 3,
            "prerequisites": [7],
        },
    ]
    with IOStream.set_default(IOScripted()):
        results = await a_initiate_chats(queue)
    assert list(results) == [7, 3]
    assert results[7].chat_id == 7
    assert results[3].chat_id == 3
    assert first_messages(c) == ["two\nContext: \nB-reply"]


async def test_independent_chats_overlap(fake_llm: FakeLLMServer) -> None:
    delay = 0.5
    fake_llm.responder = lambda request: {"content": "done", "delay": delay}
    users = [agent(f"user{i}") for i in range(3)]
    bots = [agent(f"bot{i}", llm_config=fake_llm.llm_config()) for i in range(3)]
    queue = [
        {"sender": users[0], "recipient": bots[0], "message": "a", "max_turns": 1, "chat_id": 1},
        {"sender": users[1], "recipient": bots[1], "message": "b", "max_turns": 1, "chat_id": 2},
        {
            "sender": users[2],
            "recipient": bots[2],
            "message": "c",
            "max_turns": 1,
            "chat_id": 3,
            "prerequisites": [1, 2],
        },
    ]
    with IOStream.set_default(IOScripted()):
        results = await a_initiate_chats(queue)
    first, second, third = sorted(fake_llm.received, key=lambda r: r.time)
    # chats 1 and 2 ran at the same time (one after the other would be `delay` apart)
    assert second.time - first.time < delay * 0.75
    assert third.time - second.time >= delay * 0.95  # chat 3 waited for both answers
    assert third.json["messages"][-1]["content"] == "c\nContext: \ndone\ndone"
    assert results[3].summary == "done"


async def test_async_exclusions_use_queue_positions() -> None:
    a, b, c, d = agent("A"), agent("B"), agent("C"), agent("D")
    queue = [
        {"sender": a, "recipient": b, "message": "one", "max_turns": 1, "chat_id": 10},
        {"sender": a, "recipient": c, "message": "two", "max_turns": 1, "chat_id": 20},
        {
            "sender": a,
            "recipient": d,
            "message": "three",
            "max_turns": 1,
            "chat_id": 30,
            "prerequisites": [10, 20],
            "finished_chat_indexes_to_exclude_from_carryover": [1],
        },
    ]
    with IOStream.set_default(IOScripted()):
        await a_initiate_chats(queue)
    assert first_messages(d) == ["three\nContext: \nB-reply"]
    assert "carryover" not in queue[2]


@pytest.mark.parametrize(
    ("queue_ids", "match"),
    [
        ([(None, [])], "has no 'chat_id'"),
        ([(1, []), (1, [])], "chat_id 1 is used by chat_queue"),
        ([(1, ["x"])], "not int"),
        ([(1, [2])], "prerequisite 2, which is not the chat_id"),
        ([(1, [2]), (2, [3]), (3, [1])], r"cycle: 1 -> 2 -> 3 -> 1"),
    ],
)
async def test_invalid_async_queues(queue_ids: list[tuple[Any, list[Any]]], match: str) -> None:
    a, b = agent("A"), agent("B")
    queue = [
        {"sender": a, "recipient": b, "message": "x", "chat_id": chat_id, "prerequisites": pre}
        for chat_id, pre in queue_ids
    ]
    with pytest.raises(ValueError, match=match):
        await a_initiate_chats(queue)
    assert b.chat_messages == {}  # nothing ran


async def test_a_failing_chat_cancels_the_others() -> None:
    a, b = agent("A"), agent("B")
    started: list[str] = []

    async def slow(sender: Any, recipient: Any, context: Any) -> str:
        started.append("slow")
        await asyncio.sleep(10)
        return "never"

    def broken(sender: Any, recipient: Any, context: Any) -> str:
        raise RuntimeError("no message")

    queue = [
        {"sender": a, "recipient": b, "message": slow, "chat_id": 1},
        {"sender": a, "recipient": agent("C"), "message": broken, "chat_id": 2},
        {
            "sender": a,
            "recipient": agent("D"),
            "message": "later",
            "chat_id": 3,
            "prerequisites": [2],
        },
    ]
    with IOStream.set_default(IOScripted()), pytest.raises(RuntimeError, match="no message"):
        await asyncio.wait_for(a_initiate_chats(queue), timeout=5)
    assert started == ["slow"]
