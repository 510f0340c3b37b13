"""What an MCP server answers, as the text a model reads in a tool message.

parley's tool messages carry text (OpenAI's chat API takes no image in a tool message), so an
image or audio block is described by its type and size, and a resource by its URI and text.
Structured content is shown as JSON when the server sent no text beside it.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

__all__ = ["content_text", "prompt_text", "resource_text"]


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


def resource_text(contents: list[Any]) -> str:
    """A resource's contents as text (binary parts described)."""
    return "\n\n".join(_contents_text(part) for part in contents)


def prompt_text(messages: list[Any]) -> str:
    """A prompt's messages as text: one message as it is, several prefixed by their role."""
    if len(messages) == 1:
        return _block_text(messages[0].content)
    return "\n\n".join(f"{m.role}: {_block_text(m.content)}" for m in messages)
