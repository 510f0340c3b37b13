"""AutoGen-compatible code helpers (``autogen.code_utils``).

The code-execution functions are filled by the code-execution issue; the model-name constants
``autogen`` re-exports and ``content_str`` (used to show and test any message content) live
here already.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_MODEL", "FAST_MODEL", "content_str"]

DEFAULT_MODEL = "gpt-4"
FAST_MODEL = "gpt-3.5-turbo"


def content_str(content: str | list[Any] | None) -> str:
    """The text of a message content: ``None`` is ``""``, text parts are joined, images are
    ``<image>`` (spec 9.2, with AutoGen's error types for malformed content)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise TypeError(f"content must be None, a str or a list, got {type(content).__name__}")
    parts = []
    for item in content:
        if not isinstance(item, dict):
            raise TypeError(f"a content list holds dicts, got {type(item).__name__}: {item!r}")
        if "type" not in item:
            raise AssertionError(f"a content part needs a 'type': {item!r}")
        if item["type"] == "text":
            parts.append(str(item.get("text", "")))
        elif item["type"] in ("image_url", "input_image"):
            parts.append("<image>")
        else:
            raise ValueError(f"unknown content part type {item['type']!r}")
    return "".join(parts)
