"""AutoGen's private helpers of ``autogen.agentchat.chat`` (parley/agentchat/chat.py),
and that the chat queues run the same code."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley import ConversableAgent
from parley.agentchat import chat
from parley.agentchat.chat import (
    Prerequisite,
    _post_process_carryover_item,
    _validate_recipients,
    a_initiate_chats,
    initiate_chats,
)
from parley.io import IOScripted, IOStream

# Module-level double-underscore names are not mangled outside a class: reachable as in AutoGen.
create_async_prerequisites = chat.__create_async_prerequisites
find_async_chat_order = chat.__find_async_chat_order
post_carryover_processing = chat.__post_carryover_processing


def agent(name: str) -> ConversableAgent:
    return ConversableAgent(name, human_input_mode="NEVER", default_auto_reply=f"{name}-reply")


def test_prerequisite_is_a_pair_of_ints() -> None:
    assert Prerequisite == tuple[int, int]


# -- _post_process_carryover_item -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "text"),
    [
        ("plain", "plain"),
        ({"content": "from a message", "role": "user"}, "from a message"),
        ({"content": 5}, "5"),
        ({"role": "user"}, "{'role': 'user'}"),
        (None, "None"),
        (3.5, "3.5"),
        (["a"], "['a']"),
    ],
)
def test_post_process_carryover_item(item: Any, text: str) -> None:
    assert _post_process_carryover_item(item) == text


def test_the_carryover_sent_is_built_the_same_way() -> None:
    a, b = agent("A"), agent("B")
    items: list[Any] = ["one", {"content": "two"}, None]
    with IOStream.set_default(IOScripted()):
        a.initiate_chat(b, message="task", max_turns=1, carryover=items)
    sent = b.chat_messages[a][0]["content"]
    assert sent == "task\nContext: \n" + "\n".join(map(_post_process_carryover_item, items))


# -- _validate_recipients -------------------------------------------------------------------------


def test_validate_recipients_warns_on_a_repeated_recipient() -> None:
    a, b, c = agent("A"), agent("B"), agent("C")
    queue = [{"sender": a, "recipient": b}, {"sender": a, "recipient": c}]
    _validate_recipients(queue)  # no warning (filterwarnings=error would fail the test)
    with pytest.warns(UserWarning, match=r"^Repetitive recipients detected:") as record:
        _validate_recipients([*queue, {"sender": c, "recipient": b}])
    assert "clear_history=False" in str(record[0].message)
    assert record[0].filename == __file__  # points at the caller


def test_validate_recipients_needs_every_recipient() -> None:
    with pytest.raises(AssertionError) as info:
        _validate_recipients([{"sender": agent("A")}])
    assert str(info.value) == "recipient must be provided."


def test_initiate_chats_logs_the_same_text_instead_of_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    a, b = agent("A"), agent("B")
    queue = [
        {"sender": a, "recipient": b, "message": "x", "max_turns": 1},
        {"sender": a, "recipient": b, "message": "y", "max_turns": 1},
    ]
    with pytest.warns(UserWarning, match="^Repetitive recipients detected:") as record:
        _validate_recipients(queue)
    with IOStream.set_default(IOScripted()), caplog.at_level(logging.WARNING):
        initiate_chats(queue)  # filterwarnings=error: a warning here would fail the test
    assert str(record[0].message) in caplog.text


# -- __create_async_prerequisites -----------------------------------------------------------------


def test_create_async_prerequisites() -> None:
    queue = [
        {"chat_id": 1},
        {"chat_id": 2, "prerequisites": [1]},
        {"chat_id": 3, "prerequisites": [1, 2]},
    ]
    assert create_async_prerequisites(queue) == [(2, 1), (3, 1), (3, 2)]


def test_create_async_prerequisites_needs_chat_ids() -> None:
    with pytest.raises(
        ValueError,
        match=re.escape("Each chat must have a unique id for async multi-chat execution."),
    ):
        create_async_prerequisites([{"chat_id": 1}, {"prerequisites": [1]}])


def test_create_async_prerequisites_needs_int_ids() -> None:
    with pytest.raises(ValueError, match=re.escape("Prerequisite chat id is not int.")) as info:
        create_async_prerequisites([{"chat_id": 1, "prerequisites": ["first"]}])
    assert "'first'" in str(info.value)


# -- __find_async_chat_order ----------------------------------------------------------------------


def test_chat_order_is_breadth_first_layers() -> None:
    #   1   2
    #   |  /|
    #   3   4
    #    \ /
    #     5
    pairs = [(3, 1), (3, 2), (4, 2), (5, 3), (5, 4)]
    assert find_async_chat_order([1, 2, 3, 4, 5], pairs) == [1, 2, 3, 4, 5]
    assert find_async_chat_order([5, 4, 3, 2, 1], pairs) == [2, 1, 4, 3, 5]


def test_chat_order_without_prerequisites_keeps_the_ids() -> None:
    assert find_async_chat_order({7}, []) == [7]
    assert find_async_chat_order([], []) == []


def test_a_repeated_prerequisite_counts_once() -> None:
    assert find_async_chat_order([1, 2], [(2, 1), (2, 1)]) == [1, 2]


@pytest.mark.parametrize(
    "pairs",
    [
        [(1, 2), (2, 1)],  # a cycle
        [(1, 1)],  # waiting for itself
        [(2, 9)],  # an unknown prerequisite
        [(2, 1), (3, 4), (4, 3)],  # a cycle beside a healthy part
    ],
)
def test_a_chat_that_can_never_start_gives_no_order(pairs: list[Prerequisite]) -> None:
    assert find_async_chat_order([1, 2, 3, 4], pairs) == []


@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=20))
def test_an_order_puts_every_chat_after_its_prerequisites(pairs: list[Prerequisite]) -> None:
    ids = list(range(8))
    order = find_async_chat_order(ids, pairs)
    if order:
        assert sorted(order) == ids
        position = {chat_id: i for i, chat_id in enumerate(order)}
        assert all(position[pre] < position[chat_id] for chat_id, pre in pairs)
    else:
        # Only a cycle stops it: some chat reaches itself through its prerequisites.
        reach = {i: {pre for chat_id, pre in pairs if chat_id == i} for i in ids}
        for _ in ids:
            reach = {i: r | {p for q in r for p in reach[q]} for i, r in reach.items()}
        assert any(i in reach[i] for i in ids)


async def test_a_initiate_chats_reports_the_cycle_the_order_cannot_place() -> None:
    a, b = agent("A"), agent("B")
    queue = [
        {"sender": a, "recipient": b, "message": "x", "chat_id": 1, "prerequisites": [2]},
        {"sender": a, "recipient": b, "message": "y", "chat_id": 2, "prerequisites": [1]},
    ]
    assert find_async_chat_order([1, 2], create_async_prerequisites(queue)) == []
    with IOStream.set_default(IOScripted()), pytest.raises(ValueError, match="cycle: 1 -> 2 -> 1"):
        await a_initiate_chats(queue)


# -- __post_carryover_processing ------------------------------------------------------------------


def test_post_carryover_processing_prints_the_banner() -> None:
    def make_message(*args: Any) -> str:
        return "m"

    io = IOScripted()
    with IOStream.set_default(io):
        post_carryover_processing(
            {"message": make_message, "carryover": ["c1", {"content": "c2"}], "verbose": True}
        )
    stars = "*" * 80
    assert io.text == (
        f"\n{stars}\nStarting a new chat....\nMessage:\nCallable: make_message\n"
        f"Carryover:\nc1\nc2\n\n{stars}\n"
    )


def test_post_carryover_processing_prints_even_for_silent_chats() -> None:
    # As AutoGen's: the queue runners skip the banner for silent chats, not this helper.
    io = IOScripted()
    with IOStream.set_default(io):
        post_carryover_processing({"message": "m", "silent": True})
    assert "Starting a new chat...." in io.text
    assert "Message:" not in io.text  # not verbose


def test_post_carryover_processing_warns_without_a_message() -> None:
    with (
        IOStream.set_default(IOScripted()),
        pytest.warns(UserWarning, match="message is not provided"),
    ):
        post_carryover_processing({"recipient": agent("B")})
