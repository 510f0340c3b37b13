"""Cache keys computed incrementally over a growing conversation equal the one-shot key."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from parley.oai._cache_key import KeyHasher, cache_key


def _conversation(n: int) -> list[dict[str, Any]]:
    return [{"role": "system", "content": "sys"}] + [
        {"role": ("user", "assistant")[i % 2], "content": f"message {i}", "name": f"agent_{i % 2}"}
        for i in range(n)
    ]


def test_a_growing_chat_gets_the_one_shot_keys() -> None:
    hasher = KeyHasher()
    messages = _conversation(0)
    for i in range(30):
        params = {"model": "gpt-4", "temperature": 0, "messages": messages}
        assert hasher.key(params) == cache_key(params)
        messages = [*messages, *_conversation(i + 2)[-2:]]


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m[1].update(content="edited in place"),  # a message changed after hashing
        lambda m: m[1].update(content=1),  # an int where a str was: equal-looking JSON differs
        lambda m: m.insert(0, {"role": "system", "content": "new first"}),
        lambda m: m.pop(),
        lambda m: m.clear(),
    ],
    ids=["edited", "int", "inserted", "shorter", "empty"],
)
def test_changed_history_is_noticed(change: Any) -> None:
    hasher = KeyHasher()
    messages = _conversation(5)
    hasher.key({"model": "m", "messages": messages})
    change(messages)
    params = {"model": "m", "messages": messages}
    assert hasher.key(params) == cache_key(params)


def test_other_fields_and_odd_messages() -> None:
    hasher = KeyHasher()
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    odd = {"role": "user", "content": [{"type": "text", "text": "x"}], "n": 1.0, "flag": True}
    requests: list[dict[str, Any]] = [
        {"model": "m", "messages": _conversation(3)},
        {"model": "m", "messages": _conversation(3), "tools": tools},  # a field before
        {"model": "m", "messages": [*_conversation(3), odd], "tools": tools},
        {"model": "m", "messages": [*_conversation(3), odd, *_conversation(5)[-2:]]},
        {"model": "m", "messages": _conversation(4), "api_key": "sk-x", "base_url": "u"},
        {"model": "m", "messages": _conversation(4), "extra_headers": {"A": "Bearer sk-xyz"}},
        {"model": "m", "prompt": "no messages"},
        {"model": "m", "messages": tuple(_conversation(2))},
    ]
    for params in requests:
        assert hasher.key(copy.deepcopy(params)) == cache_key(params)


def test_values_json_cannot_hold_raise_the_one_shot_error() -> None:
    hasher = KeyHasher()
    params = {"model": "m", "messages": [{"role": "user", "content": object()}]}
    with pytest.raises(TypeError, match=r"\['messages'\]\[0\]\['content'\]"):
        hasher.key(params)
