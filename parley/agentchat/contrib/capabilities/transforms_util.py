"""Helpers of the message transforms (AutoGen's ``transforms_util``), with AutoGen's behaviour.

The counting helpers take an optional ``model`` (parley's extension; AutoGen always counted with
the default model ``gpt-3.5-turbo-0613``, which stays the default).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

from ._texts import DEFAULT_MODEL, content_tokens

if TYPE_CHECKING:
    from ....cache.abstract_cache_base import AbstractCache

__all__ = [
    "cache_content_get",
    "cache_content_set",
    "cache_key",
    "count_text_tokens",
    "is_content_right_type",
    "is_content_text_empty",
    "is_tool_call_valid",
    "min_tokens_reached",
    "should_transform_message",
]


def cache_key(content: Any, *args: Hashable) -> str:
    """The cache key of ``content`` under the given settings: their ``str``s joined."""
    return "".join(str(x) for x in (content, *args))


def cache_content_get(cache: AbstractCache | None, key: str) -> tuple[Any, ...] | None:
    """What :func:`cache_content_set` stored under ``key``; None without a cache or entry."""
    if cache:
        cached_value = cache.get(key)
        if cached_value:
            # parley's caches store JSON, so the tuple comes back as a list.
            return tuple(cached_value) if isinstance(cached_value, list) else cached_value
    return None


def cache_content_set(cache: AbstractCache | None, key: str, content: Any, *extra: Any) -> None:
    """Store ``(content, *extra)`` under ``key`` when there is a cache."""
    if cache:
        cache.set(key, (content, *extra))


def min_tokens_reached(
    messages: list[dict[str, Any]], min_tokens: int | None, *, model: str = DEFAULT_MODEL
) -> bool:
    """Whether the messages' text holds at least ``min_tokens`` tokens (always, for no
    minimum). Counting stops as soon as the minimum is reached."""
    if not min_tokens:
        return True
    total = 0
    for message in messages:
        if "content" in message:
            total += content_tokens(message["content"], model)
            if total >= min_tokens:
                return True
    return False


def count_text_tokens(content: str | list[Any] | Any, *, model: str = DEFAULT_MODEL) -> int:
    """Tokens of the text of ``content``: a str, or the str items and ``"text"`` values of a
    multimodal list; 0 for anything else (``None`` content, say)."""
    return content_tokens(content, model)


def is_content_right_type(content: Any) -> bool:
    """Whether ``content`` is text or a multimodal list, the kinds a transform can change."""
    return isinstance(content, (str, list))


def is_content_text_empty(content: Any) -> bool:
    """Whether ``content`` holds no text (``""``, a list without text, ``None``...)."""
    if isinstance(content, str):
        return content == ""
    if isinstance(content, list):
        texts = []
        for item in content:
            if isinstance(item, str):
                texts.append(item)
            elif isinstance(item, Mapping) and "text" in item:
                texts.append(item["text"])
        return not any(texts)
    return True


def should_transform_message(
    message: dict[str, Any], filter_dict: dict[str, Any] | None, exclude: bool
) -> bool:
    """Whether a transform with this filter changes ``message``: every message without a
    filter; with one, as ``filter_config`` selects it (``exclude=True``: those it does not
    match)."""
    if not filter_dict:
        return True
    from ....oai._config_lists import filter_config  # parley.oai only when a filter is used

    return len(filter_config([message], filter_dict, exclude)) > 0


def is_tool_call_valid(messages: list[dict[str, Any]]) -> bool:
    """AutoGen's check that a history does not start with a tool result (``IndexError`` for an
    empty list). parley's limiters keep tool calls with their results instead
    (:mod:`._units`); this stays for code that calls it."""
    return messages[0].get("role") != "tool"
