"""MessageTokenLimiter (website/docs/tutorial/long-contexts.md) and how it keeps tool calls
whole."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest

from parley.agentchat.contrib.capabilities.transforms import MessageTokenLimiter
from parley.io import IOScripted, IOStream

from ._histories import call, pairing_errors, result, stored, user

TEXTS = ["one two three four five six seven eight nine ten", "alpha beta gamma delta", "x y z"]


def history(*texts: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": t} for t in texts]


def contents(messages: list[dict[str, Any]]) -> list[Any]:
    return [m.get("content") for m in messages]


def test_per_message_truncation() -> None:
    limited = MessageTokenLimiter(max_tokens_per_message=3).apply_transform(history(*TEXTS))
    assert contents(limited) == ["one two three", "alpha beta gamma", "x y z"]


def test_max_tokens_alone_fills_the_budget() -> None:
    # AutoGen kept ["x y z"] only: with no per-message limit it reserved sys.maxsize tokens for
    # every message (README, "Message transforms keep tool calls with their results"). parley
    # reserves what the message needs.
    limited = MessageTokenLimiter(max_tokens=6).apply_transform(history(*TEXTS))
    assert contents(limited) == ["alpha beta gamma", "x y z"]
    limited = MessageTokenLimiter(max_tokens=100).apply_transform(history(*TEXTS))
    assert contents(limited) == TEXTS
    # With no limit at all nothing is cut (AutoGen 0.2.35 kept the newest two messages).
    assert contents(MessageTokenLimiter().apply_transform(history(*TEXTS))) == TEXTS


def test_both_limits_follow_autogens_reservation() -> None:
    # With a per-message limit the walk reserves it for each message, as AutoGen did: the
    # third message finds 6 - 6 - 3 < 0 and is cut to the 0 tokens left, then the walk stops.
    limiter = MessageTokenLimiter(max_tokens_per_message=3, max_tokens=6)
    limited = limiter.apply_transform(history("older", *TEXTS))
    assert contents(limited) == ["", "alpha beta gamma", "x y z"]


def test_min_tokens_not_reached_returns_the_same_list() -> None:
    messages = history(*TEXTS)
    limiter = MessageTokenLimiter(max_tokens_per_message=3, min_tokens=100)
    assert limiter.apply_transform(messages) is messages


@pytest.mark.parametrize(("exclude", "cut"), [(True, "user"), (False, "system")])
def test_filter_dict(exclude: bool, cut: str) -> None:
    messages = [
        {"role": "system", "content": "alpha beta gamma delta"},
        {"role": "user", "content": "alpha beta gamma delta"},
    ]
    limiter = MessageTokenLimiter(
        max_tokens_per_message=2, filter_dict={"role": ["system"]}, exclude_filter=exclude
    )
    limited = {m["role"]: m["content"] for m in limiter.apply_transform(messages)}
    assert limited[cut] == "alpha beta"
    other = "system" if cut == "user" else "user"
    assert limited[other] == "alpha beta gamma delta"


def test_multimodal_content_cuts_text_parts_only() -> None:
    image = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
    message = {
        "role": "user",
        "content": [{"type": "text", "text": "alpha beta gamma delta"}, image],
    }
    (limited,) = MessageTokenLimiter(max_tokens_per_message=2).apply_transform([message])
    assert limited["content"] == [{"type": "text", "text": "alpha beta"}, image]
    assert message["content"][0]["text"] == "alpha beta gamma delta"  # the caller's is intact


def test_text_parts_share_the_message_budget() -> None:
    # AutoGen cut each text part to the limit on its own (two parts: twice the limit).
    message = {
        "role": "user",
        "content": [{"type": "text", "text": "a b"}, {"type": "text", "text": "c d"}],
    }
    (limited,) = MessageTokenLimiter(max_tokens_per_message=3).apply_transform([message])
    assert limited["content"] == [{"type": "text", "text": "a b"}, {"type": "text", "text": "c"}]


def test_logs() -> None:
    limiter = MessageTokenLimiter(max_tokens_per_message=3)
    before = history(*TEXTS)
    after = limiter.apply_transform(before)
    assert limiter.get_logs(before, after) == (
        "Truncated 8 tokens. Number of tokens reduced from 17 to 9",
        True,
    )
    assert limiter.get_logs(before, before) == ("No tokens were truncated.", False)


def printed(make: Any) -> list[str]:
    console = IOScripted()
    with IOStream.set_default(console):
        make()
    return re.sub(r"\x1b\[[0-9;]*m", "", console.text).splitlines()


def test_capping_and_unknown_model_lines() -> None:
    lines = printed(lambda: MessageTokenLimiter(max_tokens=5000))
    assert lines == [
        "Max token was set to 5000, but gpt-3.5-turbo-0613 can only accept 4096 tokens. "
        "Capping it to 4096."
    ]
    limiter = MessageTokenLimiter(max_tokens=5000, max_tokens_per_message=10, model="gpt-4")
    assert limiter._max_tokens == 5000
    lines = printed(lambda: MessageTokenLimiter(max_tokens=10, model="no-such-model"))
    assert lines == ["Model no-such-model not found in token_count_utils."] * 2


def test_unknown_model_raises_key_error_when_cutting() -> None:
    with IOStream.set_default(IOScripted()):
        limiter = MessageTokenLimiter(max_tokens_per_message=1, model="no-such-model")
    assert limiter._max_tokens == sys.maxsize
    with pytest.raises(KeyError):
        limiter.apply_transform(history("alpha beta"))


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        (
            {"max_tokens": -1},
            "max_tokens and max_tokens_per_message must be None or greater than or equal to 0",
        ),
        (
            {"max_tokens_per_message": -1},
            "max_tokens and max_tokens_per_message must be None or greater than or equal to 0",
        ),
        ({"min_tokens": -1}, "min_tokens must be None or greater than or equal to 0."),
        ({"min_tokens": 10, "max_tokens": 5}, "min_tokens must not be more than max_tokens."),
    ],
)
def test_bad_limits(kwargs: dict[str, int], text: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        MessageTokenLimiter(**kwargs)


# -- where parley differs on purpose: a call and its results are one unit --------------------------


def test_a_leading_result_is_dropped_not_the_newest_message() -> None:
    # AutoGen over [tool, user] returns the truncated tool message alone (see
    # website/docs/tutorial/long-contexts.md, "Tool calls stay with their results").
    messages = [result("lost", "alpha beta gamma"), user("delta")]
    assert MessageTokenLimiter(max_tokens=100).apply_transform(messages) == [messages[1]]


def test_a_result_without_its_call_inside_the_history_is_kept_and_counted() -> None:
    # As in AutoGen: it is cut like any message and takes its share of the budget.
    messages = [user("one two"), result("lost", "alpha beta gamma"), user("delta")]
    limited = MessageTokenLimiter(max_tokens_per_message=2).apply_transform(messages)
    assert contents(limited) == ["one two", "alpha beta", "delta"]
    # When the budget runs out on it, it would open the history: it goes too.
    assert MessageTokenLimiter(max_tokens=3).apply_transform(messages) == [messages[2]]


def test_the_budget_runs_out_inside_a_unit() -> None:
    # AutoGen would keep the truncated result and stop, dropping its call: OpenAI's 400.
    # parley keeps the call with the result cut to the budget left.
    messages = [user("task"), call("c1"), result("c1", "alpha beta gamma delta"), user("x y z")]
    limited = MessageTokenLimiter(max_tokens=5).apply_transform(messages)
    assert contents(limited) == [None, "alpha beta", "x y z"]
    assert limited[0]["tool_calls"] == messages[1]["tool_calls"]
    assert not pairing_errors(limited)


def test_stored_results_are_counted_and_cut_as_the_model_reads_them() -> None:
    # The stored message's own content is not sent; its tool_responses are, one message each.
    results = stored(("a", "alpha beta gamma delta"), ("b", "one two three four"))
    messages = [call("a", "b"), results]
    (_, limited) = MessageTokenLimiter(max_tokens_per_message=2).apply_transform(messages)
    assert [r["content"] for r in limited["tool_responses"]] == ["alpha beta", "one two"]
    assert limited["content"] == "alpha beta\n\none two"
    assert results["tool_responses"][0]["content"] == "alpha beta gamma delta"


def test_tool_calls_are_never_cut() -> None:
    messages = [call("c1", content="alpha beta gamma"), result("c1", "delta")]
    limited = MessageTokenLimiter(max_tokens=1).apply_transform(messages)
    assert limited[0]["tool_calls"] == messages[0]["tool_calls"]
    assert contents(limited) == ["", "delta"]
