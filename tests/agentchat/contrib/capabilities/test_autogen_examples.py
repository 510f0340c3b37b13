"""The message transforms on AutoGen 0.2's own example histories give AutoGen's results
(AutoGen's tool-message examples are in test_history_limiter.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from parley.agentchat.contrib.capabilities.transforms import (
    MessageHistoryLimiter,
    MessageTokenLimiter,
    TextMessageCompressor,
)
from parley.agentchat.contrib.capabilities.transforms_util import count_text_tokens


def longer() -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "content": [{"type": "text", "text": "are you doing?"}]},
        {"role": "user", "content": "very very very very very very long string"},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": [{"type": "text", "text": "there"}]},
        {"role": "user", "content": "how"},
    ]


def shorter() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": [{"type": "text", "text": "there"}]},
        {"role": "user", "content": "how are you"},
    ]


def contentless() -> list[dict[str, Any]]:
    return [{"role": "user", "function_call": "example"}, {"role": "assistant", "content": None}]


def tokens(messages: list[dict[str, Any]]) -> int:
    return sum(count_text_tokens(m["content"]) for m in messages if "content" in m)


def text_of(message: dict[str, Any]) -> str:
    content = message["content"]
    return content[0]["text"] if isinstance(content, list) else content


class Emptying:
    """A compressor that compresses everything to nothing."""

    def compress_text(self, text: str, **params: Any) -> dict[str, Any]:
        return {"compressed_prompt": ""}


@pytest.mark.parametrize(
    ("make", "kept", "log"),
    [
        (longer, 3, ("Removed 2 messages. Number of messages reduced from 5 to 3.", True)),
        (shorter, 3, ("No messages were removed.", False)),
        (contentless, 2, ("No messages were removed.", False)),
    ],
)
def test_history_limiter(make: Any, kept: int, log: tuple[str, bool]) -> None:
    limiter = MessageHistoryLimiter(max_messages=3)
    out = limiter.apply_transform(make())
    assert len(out) == kept
    assert limiter.get_logs(make(), out) == log
    assert len(MessageHistoryLimiter(3, keep_first_message=True).apply_transform(make())) == kept


@pytest.mark.parametrize(
    ("make", "per_message", "threshold", "log"),
    [
        (longer, 9, 5, ("Truncated 6 tokens. Number of tokens reduced from 15 to 9", True)),
        (shorter, 5, 5, ("No tokens were truncated.", False)),
        (contentless, 0, 0, ("No tokens were truncated.", False)),
    ],
)
def test_token_limiter(make: Any, per_message: int, threshold: int, log: tuple[str, bool]) -> None:
    limiter = MessageTokenLimiter(max_tokens_per_message=3)
    out = limiter.apply_transform(make())
    assert (tokens(out), len(out)) == (per_message, len(make()))
    assert limiter.get_logs(make(), out) == log
    # Under min_tokens=10 the shorter histories are left alone; the longer one is cut to 1 each.
    out = MessageTokenLimiter(max_tokens_per_message=1, min_tokens=10).apply_transform(make())
    assert (tokens(out), len(out)) == (threshold, len(make()))


@pytest.mark.parametrize("make", [longer, shorter])
def test_filters_choose_what_is_cut(make: Any) -> None:
    before = make()
    for exclude in (True, False):
        limiter = MessageTokenLimiter(
            max_tokens_per_message=0, filter_dict={"role": "user"}, exclude_filter=exclude
        )
        compressor = TextMessageCompressor(
            text_compressor=Emptying(), filter_dict={"role": "user"}, exclude_filter=exclude
        )
        for transform in (limiter, compressor):
            out = transform.apply_transform(make())
            for old, new in zip(before, out, strict=True):
                changed = (old["role"] == "user") != exclude
                if changed:
                    assert len(text_of(new)) < len(text_of(old))
                else:
                    assert text_of(new) == text_of(old)


def test_compressor_shortens_every_text() -> None:
    text = "Run this test with a long string. "
    compressor = TextMessageCompressor(text_compressor=Emptying())
    assert len(compressor.apply_transform([{"content": text}])[0]["content"]) < len(text)
    messages = [
        {"role": role, "content": [{"type": "text", "text": text * 3}]}
        for role in ("assistant", "role", "assistant", "assistant")
    ]
    out = compressor.apply_transform(copy.deepcopy(messages))
    assert all(len(text_of(n)) < len(text_of(o)) for o, n in zip(messages, out, strict=True))
