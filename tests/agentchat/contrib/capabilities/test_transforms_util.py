"""AutoGen's transforms_util helpers (parley/agentchat/contrib/capabilities/transforms_util.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parley.agentchat.contrib.capabilities import transforms_util as tu
from parley.cache import Cache, InMemoryCache
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


# AutoGen's table of contents: text, images, None, plain strings; and their text tokens.
CONTENTS = [
    ([{"text": "Hello"}, {"image_url": {"url": "https://example.com/image.jpg"}}], 1),
    ([{"image_url": {"url": "https://example.com/image.jpg"}}], 0),
    ([{"text": "Hello"}, {"text": "World"}], 2),
    (None, 0),
    ("Hello there!", 3),
    (["Hello there!", "Hello there!"], 6),
]


@pytest.mark.parametrize(("content", "tokens"), CONTENTS)
def test_autogens_contents(content: Any, tokens: int) -> None:
    assert tu.count_text_tokens(content) == tokens
    assert tu.is_content_text_empty(content) == (tokens == 0)
    message = {"content": content}
    assert tu.min_tokens_reached([message], None)
    assert tu.min_tokens_reached([message], 0)
    assert not tu.min_tokens_reached([message], tokens + 1)


def test_autogens_cache_keys_tell_every_content_apart() -> None:
    keys = [tu.cache_key(content, 10) for content, _ in CONTENTS]
    assert len(set(keys)) == len(keys)
    assert keys == [tu.cache_key(content, 10) for content, _ in CONTENTS]


@pytest.mark.parametrize(("content", "tokens"), CONTENTS)
def test_autogens_cache_round_trips_on_disk(tmp_path: Path, content: Any, tokens: int) -> None:
    # As AutoGen's example does: a disk cache in a temporary directory given as the seed.
    with Cache.disk(str(tmp_path / "cache")) as cache:
        tu.cache_content_set(cache, "one", content)
        assert tu.cache_content_get(cache, "one") == (content,)
        several = [content, 1, "some_string", {"new_key": "new_value"}]
        tu.cache_content_set(cache, "several", *several)
        assert tu.cache_content_get(cache, "several") == tuple(several)
        tu.cache_content_set(None, "none", content)
        assert tu.cache_content_get(cache, "none") is None
        assert tu.cache_content_get(None, "none") is None
