"""Images in tool results, for the chat APIs whose tool messages carry text only.

OpenAI's chat completions refuses an image part in a ``tool`` (or legacy ``function``) message:
only a ``user`` message may hold images. So a result whose content holds images (a tool that
returned image parts: :mod:`parley.agentchat._tool_content`) is sent as its text, each image
replaced by a short note, and its images follow in one ``user`` message placed after the
last of the consecutive tool messages (every result must still follow its call directly).
The APIs shaped like OpenAI's (Groq, Together, Cerebras, Mistral, Ollama, Cohere) are sent
the same way. The Responses API, Anthropic, Bedrock and Gemini carry images inside the result
itself, in their own translations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "AFTER_RESULTS",
    "has_images",
    "images_after_results",
    "split_images",
    "with_images_after_results",
]

_RESULT_ROLES = ("tool", "function")
AFTER_RESULTS = "sent in the user message after the results"
"""Where a result's image is, in its note, when it follows the results."""


def _is_image(part: Any) -> bool:
    return isinstance(part, Mapping) and part.get("type") == "image_url"


def has_images(content: Any) -> bool:
    """Whether a message's ``content`` holds an image part."""
    return isinstance(content, list) and any(_is_image(p) for p in content)


def split_images(content: Sequence[Any], where: str) -> tuple[str, list[Any]]:
    """A result's text, each image replaced in its place by a numbered note saying ``where``
    it is, and its image parts. Text parts are joined by blank lines."""
    texts: list[str] = []
    images: list[Any] = []
    for part in content:
        if _is_image(part):
            images.append(part)
            texts.append(f"[image {len(images)}: {where}]")
        elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, str):
            texts.append(part)
    return "\n\n".join(t for t in texts if t), images


def _label(message: Mapping[str, Any], count: int) -> dict[str, Any]:
    which = message.get("tool_call_id") or message.get("name") or "a tool"
    noun = "image" if count == 1 else f"{count} images"
    return {"type": "text", "text": f"The {noun} returned by the tool call {which}:"}


def _first(messages: Sequence[Mapping[str, Any]]) -> int | None:
    """The index of the first result with an image (one quick pass: most requests hold none)."""
    for i, m in enumerate(messages):
        if m.get("role") in _RESULT_ROLES:
            content = m.get("content")
            if type(content) is list and has_images(content):
                return i
    return None


def images_after_results(messages: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """``messages`` with the images of tool results moved to a user message after them (see
    the module's docs); ``messages`` itself when no result holds an image."""
    first = _first(messages)
    if first is None:
        return messages
    out = list(messages[:first])
    shown: list[Any] = []  # the parts of the user message that follows the current results
    for m in messages[first:]:
        is_result = m.get("role") in _RESULT_ROLES
        if shown and not is_result:
            out.append({"role": "user", "content": shown})
            shown = []
        content: Any = m.get("content") if is_result else None
        if has_images(content):
            text, images = split_images(content, AFTER_RESULTS)
            out.append({**m, "content": text})
            shown += [_label(m, len(images)), *images]
        else:
            out.append(m)
    if shown:
        out.append({"role": "user", "content": shown})
    return out


def with_images_after_results(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with its ``messages`` through :func:`images_after_results`: a new dict when
    they change (``params`` is never changed), else ``params`` itself."""
    messages = params.get("messages")
    if not isinstance(messages, (list, tuple)):
        return params
    moved = images_after_results(messages)
    return params if moved is messages else {**params, "messages": moved}
