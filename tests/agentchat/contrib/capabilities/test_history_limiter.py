"""MessageHistoryLimiter (website/docs/tutorial/long-contexts.md) and how it keeps tool calls
whole."""

from __future__ import annotations

from typing import Any

import pytest

from parley.agentchat.contrib.capabilities.transforms import MessageHistoryLimiter

from ._histories import assistant as assistant_says
from ._histories import call, pairing_errors, result, stored, user

M = [{"role": ("user", "assistant")[i % 2], "content": f"m{i}"} for i in range(5)]
TOOL_CALL = call("c1")
TOOL = result("c1", "42")


def contents(messages: list[dict[str, Any]]) -> list[Any]:
    return [m.get("content") for m in messages]


@pytest.mark.parametrize(
    ("limiter", "expected"),
    [
        (MessageHistoryLimiter(3), ["m2", "m3", "m4"]),
        (MessageHistoryLimiter(3, keep_first_message=True), ["m0", "m3", "m4"]),
        (MessageHistoryLimiter(1, keep_first_message=True), ["m0"]),
    ],
)
def test_autogens_examples(limiter: MessageHistoryLimiter, expected: list[str]) -> None:
    assert contents(limiter.apply_transform(M)) == expected


def test_autogens_tool_examples_give_the_same_lists_for_a_sounder_reason() -> None:
    # AutoGen skipped a tool message landing in the last free slot (wasting the slot); parley
    # drops the call and its result together because the pair does not fit. Same lists here.
    history = [M[0], TOOL_CALL, TOOL, M[3], M[4]]
    assert contents(MessageHistoryLimiter(3).apply_transform(history)) == ["m3", "m4"]
    history = [M[0], M[1], TOOL_CALL, TOOL, M[4]]
    assert contents(MessageHistoryLimiter(2).apply_transform(history)) == ["m4"]


def test_nothing_cut_returns_the_same_list() -> None:
    assert MessageHistoryLimiter(5).apply_transform(M) is M
    assert MessageHistoryLimiter().apply_transform(M) is M


@pytest.mark.parametrize("bad", [0, -1])
def test_max_messages_below_one_is_refused_with_autogens_text(bad: int) -> None:
    with pytest.raises(ValueError, match=r"^max_messages must be None or greater than 1$"):
        MessageHistoryLimiter(bad)


def test_logs() -> None:
    limiter = MessageHistoryLimiter(2)
    assert limiter.get_logs(M, M[3:]) == (
        "Removed 3 messages. Number of messages reduced from 5 to 2.",
        True,
    )
    assert limiter.get_logs(M, M) == ("No messages were removed.", False)


# -- where parley differs on purpose: a call and its results are one unit --------------------------


def test_a_result_never_loses_its_call() -> None:
    # AutoGen over [u, call(2), r1, r2, u2] with max 3: keeps r2 and u2, skips r1 in the last
    # slot, finds the history starting with a tool result and pops the *newest* message:
    # [r2] alone, which OpenAI refuses. parley keeps what fits whole: the newest message.
    history = [user("u"), call("a", "b"), result("a", "1"), result("b", "2"), user("u2")]
    assert MessageHistoryLimiter(3).apply_transform(history) == [history[4]]
    assert MessageHistoryLimiter(4).apply_transform(history) == history[1:]


def test_keep_first_message_never_keeps_a_lone_result() -> None:
    # AutoGen: [tool] for a history starting with a result (website/docs/tutorial/long-contexts.md).
    history = [TOOL, M[1], M[2], M[3]]
    assert contents(MessageHistoryLimiter(2, keep_first_message=True).apply_transform(history)) == [
        "m2",
        "m3",
    ]


def test_keep_first_message_keeps_a_first_call_with_its_results() -> None:
    # AutoGen kept the call alone ([call, m3]): refused by OpenAI.
    history = [TOOL_CALL, TOOL, M[2], M[3], M[4]]
    kept = MessageHistoryLimiter(3, keep_first_message=True).apply_transform(history)
    assert kept == [TOOL_CALL, TOOL, M[4]]
    # A first unit bigger than the limit is not kept; the newest messages are.
    kept = MessageHistoryLimiter(1, keep_first_message=True).apply_transform(history)
    assert kept == [M[4]]


def test_stored_results_count_as_one_message() -> None:
    # parley stores the results of one call message as one message (tool_responses).
    history = [M[0], call("a", "b"), stored(("a", "1"), ("b", "2")), M[3]]
    assert MessageHistoryLimiter(3).apply_transform(history) == history[1:]


def test_a_newest_unit_too_big_leaves_nothing() -> None:
    history = [M[0], call("a", "b"), result("a", "1"), result("b", "2")]
    assert MessageHistoryLimiter(2).apply_transform(history) == []


def test_a_pending_call_is_kept() -> None:
    # The newest call is about to be executed: it is what the executing agent replies to.
    history = [*M, call("next")]
    kept = MessageHistoryLimiter(2).apply_transform(history)
    assert kept == [M[4], history[-1]]
    assert not pairing_errors(kept, pending_last=True)


def test_results_without_their_call_keep_their_slot_but_never_open_the_window() -> None:
    # As in AutoGen, a result whose call is gone counts and stays where it is...
    history = [result("lost", "x"), M[1], result("lost2", "y"), M[3], M[4]]
    assert MessageHistoryLimiter(4).apply_transform(history) == history[1:]
    # ...but a window it would open starts after it (AutoGen skipped it in the last slot).
    assert MessageHistoryLimiter(3).apply_transform(history) == [M[3], M[4]]
    # A run of them is dropped whole (AutoGen skipped only the oldest: [tool, m4] here).
    history = [M[0], M[1], result("a", "x"), result("b", "y"), M[4]]
    assert MessageHistoryLimiter(3).apply_transform(history) == [M[4]]


def test_results_without_their_call_never_follow_only_system_messages() -> None:
    system = {"role": "system", "content": "rules"}
    history = [M[0], system, result("lost", "x"), M[3], M[4]]
    assert MessageHistoryLimiter(4).apply_transform(history) == [system, M[3], M[4]]
    # Nor the kept first message: the newest part starts after a gap there (AutoGen: the same).
    history = [M[0], M[1], result("lost", "x"), M[3], M[4]]
    kept = MessageHistoryLimiter(4, keep_first_message=True).apply_transform(history)
    assert kept == [M[0], M[3], M[4]]


def test_autogens_role_named_tool_examples() -> None:
    # AutoGen's own examples mark the call by a role "tool_calls" and answer it with a bare
    # "tool" message: no ids, so to parley the result has no call before it. They come out as
    # AutoGen's: the result never opens the window and takes its slot.
    hello, how, doing = user("hello"), user("how are you"), assistant_says("are you doing?")
    asks, answers = (
        {"role": "tool_calls", "content": "calling_tool"},
        {"role": "tool", "content": "r"},
    )
    mixed = [hello, asks, answers, how, doing]
    assert MessageHistoryLimiter(3).apply_transform(mixed) == [how, doing]
    keep_first = MessageHistoryLimiter(3, keep_first_message=True)
    assert keep_first.apply_transform(mixed) == [hello, how, doing]
    pairs = [hello, asks, answers, asks, answers]
    assert [m["role"] for m in MessageHistoryLimiter(3).apply_transform(pairs)] == [
        "tool_calls",
        "tool",
    ]
    assert [m["role"] for m in keep_first.apply_transform(pairs)] == ["user", "tool_calls", "tool"]
    limiter = MessageHistoryLimiter(3)
    for history in (mixed, pairs):
        assert limiter.get_logs(history, limiter.apply_transform(history)) == (
            "Removed 3 messages. Number of messages reduced from 5 to 2.",
            True,
        )


def test_the_kept_messages_stay_in_order() -> None:
    # AutoGen 0.2.35 without keep_first_message put the oldest kept message second
    # (m3, m2, m4 here); parley keeps the history's order.
    assert contents(MessageHistoryLimiter(3).apply_transform(M)) == ["m2", "m3", "m4"]
    assert contents(MessageHistoryLimiter(2).apply_transform(M)) == ["m3", "m4"]


def test_the_callers_list_is_not_changed() -> None:
    history = [M[0], TOOL_CALL, TOOL, M[3], M[4]]
    snapshot = [dict(m) for m in history]
    MessageHistoryLimiter(2, keep_first_message=True).apply_transform(history)
    assert history == snapshot
