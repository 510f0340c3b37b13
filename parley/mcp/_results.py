"""What an MCP server answers, as the content of a tool message.

A tool result with images (PNG, JPEG, GIF or WEBP blocks) is a list of content parts: each
image an ``image_url`` part of a ``data:`` URI, each other block a text part, in order; every
model client then carries the images the way its API takes them
(:mod:`parley.agentchat._tool_content`). Any other result is text, as before: an audio block
or an image of another type is described by its type and size, a resource by its URI and text
(binary contents by their type and size). Structured content is shown as JSON when the server
sent no block beside it. Resources and prompts read as text.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from ..agentchat._tool_content import data_image_part
from ..types import ContentPart, ToolResultContent

__all__ = ["content_text", "prompt_text", "resource_text", "tool_content"]


def _size(data: str) -> str:
    try:
        return f"{len(base64.b64decode(data, validate=False))} bytes"
    except (binascii.Error, ValueError):
        return "undecodable data"


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, {_size(block.data)}]"
    if kind == "resource_link":
        return f"[resource: {block.uri} ({block.name})]"
    if kind == "resource":
        return _contents_text(block.resource)
    return f"[{kind} content]"


def _contents_text(contents: Any) -> str:
    text = getattr(contents, "text", None)
    if text is not None:
        return str(text)
    return f"[resource {contents.uri}: {contents.mime_type or 'binary'}, {_size(contents.blob)}]"


def content_text(content: list[Any], structured: dict[str, Any] | None) -> str:
    """A tool result's blocks joined (blank line between them); its structured content as
    JSON when there is no block."""
    if not content and structured is not None:
        return json.dumps(structured, ensure_ascii=False)
    return "\n\n".join(_block_text(block) for block in content)


def tool_content(content: list[Any], structured: dict[str, Any] | None) -> ToolResultContent:
    """A tool result's content: its blocks as parts when one is an image a model can read,
    else :func:`content_text`."""
    images = [_image(block) for block in content]
    if not any(images):
        return content_text(content, structured)
    return [
        image if image is not None else {"type": "text", "text": _block_text(block)}
        for block, image in zip(content, images, strict=True)
    ]


def _image(block: Any) -> ContentPart | None:
    if getattr(block, "type", None) != "image":
        return None
    return data_image_part(str(block.mime_type), str(block.data))


def resource_text(contents: list[Any]) -> str:
    """A resource's contents as text (binary parts described)."""
    return "\n\n".join(_contents_text(part) for part in contents)


def prompt_text(messages: list[Any]) -> str:
    """A prompt's messages as text: one message as it is, several prefixed by their role."""
    if len(messages) == 1:
        return _block_text(messages[0].content)
    return "\n\n".join(f"{m.role}: {_block_text(m.content)}" for m in messages)
