"""AutoGen's transforms_util helpers (parley/agentchat/contrib/capabilities/transforms_util.py)."""

from __future__ import annotations

import pytest

from parley.agentchat.contrib.capabilities import transforms_util as tu
from parley.cache import InMemoryCache
from parley.token_count_utils import count_token


def test_cache_key_joins_the_strings() -> None:
    assert tu.cache_key("abc", 1, None) == "abc1None"
    assert tu.cache_key([{"type": "text", "text": "x"}]) == "[{'type': 'text', 'text': 'x'}]"


def test_cache_content_get_and_set() -> None:
    cache = InMemoryCache()
    assert tu.cache_content_get(None, "k") is None
    assert tu.cache_content_get(cache, "k") is None
    tu.cache_content_set(None, "k", "ignored")  # no cache: nothing happens
    tu.cache_content_set(cache, "k", "short", 7)
    assert tu.cache_content_get(cache, "k") == ("short", 7)
    cache.set("falsy", ())
    assert tu.cache_content_get(cache, "falsy") is None


def test_count_text_tokens() -> None:
    assert tu.count_text_tokens("hello world") == 2 == count_token("hello world")
    parts = ["hello world", {"type": "text", "text": "hello"}, {"type": "image_url"}]
    assert tu.count_text_tokens(parts) == 3
    assert tu.count_text_tokens(None) == 0
    assert tu.count_text_tokens(42) == 0


def test_min_tokens_reached() -> None:
    messages = [{"role": "user", "content": "hello world"}, {"role": "assistant", "content": None}]
    assert tu.min_tokens_reached(messages, None)
    assert tu.min_tokens_reached(messages, 0)
    assert tu.min_tokens_reached(messages, 2)
    assert not tu.min_tokens_reached(messages, 3)
    assert not tu.min_tokens_reached([{"role": "user"}], 1)  # no content key: not counted


def test_content_type_and_emptiness() -> None:
    assert tu.is_content_right_type("x")
    assert tu.is_content_right_type([])
    assert not tu.is_content_right_type(None)
    assert not tu.is_content_right_type({"text": "x"})
    assert tu.is_content_text_empty("")
    assert not tu.is_content_text_empty("x")
    assert tu.is_content_text_empty([])
    assert tu.is_content_text_empty(["", {"type": "text", "text": ""}, {"type": "image_url"}])
    assert not tu.is_content_text_empty(["", {"type": "text", "text": "x"}])
    assert not tu.is_content_text_empty(["x"])
    assert tu.is_content_text_empty(None)
    assert tu.is_content_text_empty(3)


def test_should_transform_message_uses_the_config_filter() -> None:
    system = {"role": "system", "content": "s"}
    user = {"role": "user", "content": "u"}
    assert tu.should_transform_message(user, None, True)
    assert tu.should_transform_message(user, {}, False)
    # exclude=True (the transforms' default): matching messages are left alone.
    assert not tu.should_transform_message(system, {"role": ["system"]}, True)
    assert tu.should_transform_message(user, {"role": ["system"]}, True)
    assert tu.should_transform_message(system, {"role": ["system"]}, False)
    assert not tu.should_transform_message(user, {"role": ["system"]}, False)


def test_is_tool_call_valid() -> None:
    assert tu.is_tool_call_valid([{"role": "user"}, {"role": "tool"}])
    assert not tu.is_tool_call_valid([{"role": "tool"}])
    with pytest.raises(IndexError):
        tu.is_tool_call_valid([])
