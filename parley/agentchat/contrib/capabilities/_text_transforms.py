"""The transforms that rewrite text without dropping messages: ``TextMessageCompressor`` and
``TextMessageContentName``, public in :mod:`.transforms` (where AutoGen defines them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from . import transforms_util
from ._texts import Slot, replace_texts, sent_texts

if TYPE_CHECKING:
    from ....cache.abstract_cache_base import AbstractCache
    from .text_compressors import TextCompressor

__all__ = ["TextMessageCompressor", "TextMessageContentName"]


class _CountedTextTransform:
    """What both transforms share: the message filter (``filter_dict``, ``exclude_filter``) and
    a ``get_logs`` reporting how much the last ``apply_transform`` changed, in the words of the
    subclass's ``_changed_log`` (with ``{}`` for the count) and ``_unchanged_log``."""

    _changed_log: ClassVar[str]
    _unchanged_log: ClassVar[str]

    def __init__(self, filter_dict: dict[str, Any] | None, exclude_filter: bool) -> None:
        self._filter_dict = filter_dict
        self._exclude_filter = exclude_filter
        self._last_changed = 0  # set by apply_transform, read by get_logs

    def _selects(self, message: dict[str, Any]) -> bool:
        return transforms_util.should_transform_message(
            message, self._filter_dict, self._exclude_filter
        )

    def get_logs(
        self,
        pre_transform_messages: list[dict[str, Any]],
        post_transform_messages: list[dict[str, Any]],
    ) -> tuple[str, bool]:
        if self._last_changed > 0:
            return self._changed_log.format(self._last_changed), True
        return self._unchanged_log, False


class TextMessageCompressor(_CountedTextTransform):
    """Compresses message text with a :class:`.text_compressors.TextCompressor` (by default
    :class:`.text_compressors.LLMLingua`, which needs ``pip install 'parley[long-context]'``).

    Every message whose text is not empty and that the filter selects is compressed, once a
    history holds ``min_tokens`` text tokens; results can be kept in ``cache`` (an
    ``AbstractCache``) under the text and ``min_tokens``. For a stored tool result the texts the
    model reads (each of ``tool_responses``) are compressed.
    """

    _changed_log = "{} tokens saved with text compression."
    _unchanged_log = "No tokens saved with text compression."

    def __init__(
        self,
        text_compressor: TextCompressor | None = None,
        min_tokens: int | None = None,
        compression_params: dict[str, Any] = {},  # noqa: B006 - never mutated; AutoGen's signature
        cache: AbstractCache | None = None,
        filter_dict: dict[str, Any] | None = None,
        exclude_filter: bool = True,
    ):
        if text_compressor is None:
            from .text_compressors import LLMLingua

            text_compressor = LLMLingua()
        self._validate_min_tokens(min_tokens)
        super().__init__(filter_dict, exclude_filter)
        self._text_compressor = text_compressor
        self._min_tokens = min_tokens
        self._compression_args = compression_params
        self._cache = cache

    def apply_transform(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages with their text compressed (new dicts; the given ones are unchanged)."""
        if not messages:
            return messages
        if not transforms_util.min_tokens_reached(messages, self._min_tokens):
            return messages
        total_savings = 0
        out = list(messages)
        for i, message in enumerate(messages):
            if not self._selects(message):
                continue
            new: dict[Slot, Any] = {}
            for slot, content in sent_texts(message):
                if not transforms_util.is_content_right_type(
                    content
                ) or transforms_util.is_content_text_empty(content):
                    continue
                key = transforms_util.cache_key(content, self._min_tokens)
                cached = transforms_util.cache_content_get(self._cache, key)
                if cached is not None:
                    compressed, savings = cached
                else:
                    compressed, savings = self._compress(content)
                transforms_util.cache_content_set(self._cache, key, compressed, savings)
                assert isinstance(savings, int)
                total_savings += savings
                if compressed != content:
                    new[slot] = compressed
            if new:
                out[i] = replace_texts(message, new)
        self._last_changed = total_savings
        return out

    def _compress(self, content: Any) -> tuple[Any, int]:
        if isinstance(content, str):
            return self._compress_text(content)
        savings = 0
        parts: list[Any] = []
        for item in content:
            if isinstance(item, str):
                text, saved = self._compress_text(item)
                parts.append(text)
                savings += saved
            elif isinstance(item, Mapping) and "text" in item:
                text, saved = self._compress_text(item["text"])
                parts.append({**item, "text": text})
                savings += saved
            else:
                parts.append(item)
        return parts, savings

    def _compress_text(self, text: str) -> tuple[str, int]:
        result = self._text_compressor.compress_text(text, **self._compression_args)
        savings = 0
        if "origin_tokens" in result and "compressed_tokens" in result:
            savings = result["origin_tokens"] - result["compressed_tokens"]
        return result["compressed_prompt"], savings

    def _validate_min_tokens(self, min_tokens: int | None) -> None:
        if min_tokens is not None and min_tokens <= 0:
            raise ValueError("min_tokens must be greater than 0 or None")


class TextMessageContentName(_CountedTextTransform):
    """Adds the speaker's ``name`` to the text of each named message (for models that do not
    read the ``name`` field), at the ``"start"`` or the ``"end"``, formatted by
    ``format_string``; ``deduplicate`` skips text that already carries it. In multimodal content
    the first (or last) text part carries it; without a text part there, one is added."""

    _changed_log = "{} message(s) changed to incorporate name."
    _unchanged_log = "No messages changed to incorporate name."

    def __init__(
        self,
        position: str = "start",
        format_string: str = "{name}:\n",
        deduplicate: bool = True,
        filter_dict: dict[str, Any] | None = None,
        exclude_filter: bool = True,
    ):
        # AutoGen's asserts, raised so that they hold under ``python -O`` too.
        if not (isinstance(position, str) and position in ("start", "end")):
            raise AssertionError(f"position must be 'start' or 'end', got {position!r}")
        if not (isinstance(format_string, str) and "{name}" in format_string):
            raise AssertionError(
                f"format_string must be a str holding '{{name}}', got {format_string!r}"
            )
        if not isinstance(deduplicate, bool):
            raise AssertionError(f"deduplicate must be a bool, got {deduplicate!r}")
        super().__init__(filter_dict, exclude_filter)
        self._position = position
        self._format_string = format_string
        self._deduplicate = deduplicate

    def apply_transform(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages with names in their text (new dicts; the given ones are unchanged)."""
        out = list(messages)
        changed = 0
        for i, message in enumerate(messages):
            content, name = message.get("content"), message.get("name")
            if not (
                transforms_util.is_content_right_type(content)
                and transforms_util.is_content_right_type(name)
                and self._selects(message)
                and not transforms_util.is_content_text_empty(content)
                and not transforms_util.is_content_text_empty(name)
            ):
                continue
            labelled = self._label(content, self._format_string.format(name=name))
            if labelled is not content:
                out[i] = {**message, "content": labelled}
                changed += 1
        self._last_changed = changed
        return out

    def _label(self, content: Any, label: str) -> Any:
        start = self._position == "start"
        if isinstance(content, str):
            if self._deduplicate and (
                content.startswith(label) if start else content.endswith(label)
            ):
                return content
            return label + content if start else content + label
        parts = list(content)
        at = 0 if start else len(parts) - 1
        part = parts[at] if parts else None
        if (
            isinstance(part, Mapping)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        ):
            text = part["text"]
            if self._deduplicate and (text.startswith(label) if start else text.endswith(label)):
                return content
            parts[at] = {**part, "text": label + text if start else text + label}
        else:
            parts.insert(0 if start else len(parts), {"type": "text", "text": label})
        return parts
