"""What a tool's return value sends the model.

A tool's result is sent as text, ``str(result)``, as AutoGen sent it. The one exception is a
result that shows images: a ``list`` of content parts in parley's multimodal form (the
``content`` of a multimodal user message) with at least one image part::

    [{"type": "text", "text": "the chart:"},
     {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR..."}}]

Such a list becomes the tool message's content as it is (copied), and each model client
carries its images the way its API takes them. Only well-formed parts qualify: a text part is
exactly ``{"type": "text", "text": str}``; an image part exactly ``{"type": "image_url",
"image_url": {"url": ..., "detail"?: "auto" | "low" | "high"}}`` whose url is ``http(s)://``
or a base64 ``data:`` URI of a PNG, JPEG, GIF or WEBP image (the types every vision API
takes). Anything else, a list without an image included, is sent as ``str(result)``, so a
tool that returns data shaped by chance like parts is not reinterpreted.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ..types import ContentPart, ImageURL, ToolResultContent, UserMessageImageContentPart

__all__ = ["IMAGE_TYPES", "data_image_part", "image_parts", "tool_content"]

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The image types a tool result may carry inline: those OpenAI, Anthropic, Gemini and Bedrock
all take."""

_TEXT_KEYS = frozenset({"type", "text"})
_IMAGE_KEYS = frozenset({"type", "image_url"})
_URL_KEYS = frozenset({"url", "detail"})
_DETAILS = ("auto", "low", "high")


def tool_content(result: Any) -> ToolResultContent:
    """The content of the tool message for ``result``: :func:`image_parts` (copied) when it
    is a multimodal result, else ``str(result)`` (which may raise, as ``str`` may)."""
    if isinstance(result, str):
        return result
    parts = image_parts(result)
    return parts if parts is not None else str(result)


def image_parts(value: Any) -> list[ContentPart] | None:
    """A copy of ``value`` if it is a list of well-formed content parts holding at least one
    image part (see the module's docs), else None."""
    if type(value) is not list or not value:
        return None
    out: list[ContentPart] = []
    has_image = False
    for part in value:
        if type(part) is not dict:
            return None
        kind = part.get("type")
        if kind == "text" and part.keys() == _TEXT_KEYS and isinstance(part["text"], str):
            out.append({"type": "text", "text": part["text"]})
            continue
        image = _image_part(part) if kind == "image_url" else None
        if image is None:
            return None
        out.append(image)
        has_image = True
    return out if has_image else None


def data_image_part(mime_type: str, data: str) -> UserMessageImageContentPart | None:
    """An image part of base64 ``data`` of type ``mime_type`` (a ``data:`` URI), or None when
    the type is not one of :data:`IMAGE_TYPES` or the data is not base64."""
    url = f"data:{mime_type.lower()};base64,{data}"
    return {"type": "image_url", "image_url": {"url": url}} if _usable_url(url) else None


def _image_part(part: dict[str, Any]) -> UserMessageImageContentPart | None:
    if part.keys() != _IMAGE_KEYS:
        return None
    image = part["image_url"]
    if type(image) is not dict or not image.keys() <= _URL_KEYS or "url" not in image:
        return None
    url, detail = image["url"], image.get("detail", "auto")
    if not isinstance(url, str) or detail not in _DETAILS or not _usable_url(url):
        return None
    copied: ImageURL = {"url": url}
    if "detail" in image:
        copied["detail"] = detail
    return {"type": "image_url", "image_url": copied}


def _usable_url(url: str) -> bool:
    if url.startswith(("https://", "http://")):
        return True
    head, comma, data = url.partition(",")
    if not (comma and head.startswith("data:") and head.endswith(";base64")):
        return False
    if head[5:-7].lower() not in IMAGE_TYPES:
        return False
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True
