"""Reading a ``RunAgentInput`` that starts a chat: its opening message and the context before it.

AG-UI's client owns the conversation: each request carries every message so far. A parley chat
starts from one message, so the last message (a user's) opens the chat, and the messages before
it, with the request's ``context`` entries, reach the agents as the chat's carryover (AutoGen's
way of carrying context into a new chat: text after the opening message). A request the
endpoint cannot serve is a :class:`Refusal`, which the endpoint reports as ``RUN_ERROR`` with
its code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ag_ui.core import (
    AssistantMessage,
    DataSource,
    ImagePart,
    Message,
    RunAgentInput,
    TextPart,
    ToolMessage,
    UrlSource,
    UserMessage,
)

__all__ = ["Opening", "Refusal", "opening", "text_of"]


@dataclass(frozen=True)
class Refusal:
    """Why a request is not served: ``code`` (stable, for programs) and ``message``."""

    code: str
    message: str


@dataclass(frozen=True)
class Opening:
    """What a new chat starts from: the opening message's content (text, or OpenAI content
    parts when it carries images) and the carryover lines before it."""

    message: str | list[dict[str, Any]]
    carryover: list[str]


def opening(incoming: RunAgentInput) -> Opening | Refusal:
    """The chat a request starts: its last message (a user's) and what came before."""
    if not incoming.messages or not isinstance(incoming.messages[-1], UserMessage):
        return Refusal(
            "no_user_message",
            "a run that starts a chat needs the conversation to end with a user message",
        )
    content = _content(incoming.messages[-1])
    if isinstance(content, Refusal):
        return content
    carryover = [f"{c.description}: {c.value}" for c in incoming.context or ()]
    for message in incoming.messages[:-1]:
        line = _line(message)
        if line:
            carryover.append(line)
    return Opening(content, carryover)


def text_of(content: Any) -> str:
    """A message's content as text: a string itself, a list of parts its text parts joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, TextPart):
                texts.append(part.text)
            elif isinstance(part, dict) and part.get("type") == "text":
                texts.append(str(part.get("text", "")))
        return "\n".join(texts)
    return str(content)


def _content(message: UserMessage) -> str | list[dict[str, Any]] | Refusal:
    if isinstance(message.content, str):
        return message.content
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart) and isinstance(part.source, (DataSource, UrlSource)):
            parts.append({"type": "image_url", "image_url": {"url": _url(part.source)}})
        else:
            what = part.type if not isinstance(part, ImagePart) else "image held by a provider"
            return Refusal(
                "unsupported_content",
                f"a user message's {what} part cannot reach a parley chat (it takes text and "
                "images by URL or inline data)",
            )
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _url(source: DataSource | UrlSource) -> str:
    if isinstance(source, UrlSource):
        return source.value
    return f"data:{source.mime_type};base64,{source.value}"


def _line(message: Message) -> str:
    """One earlier message as a line of the carryover."""
    who: str = message.role
    name = getattr(message, "name", None)
    if name:
        who = f"{who} ({name})"
    if isinstance(message, AssistantMessage):
        text = message.content or ""
        calls = [
            f"called {c.function.name}({c.function.arguments}) [call {c.id}]"
            for c in message.tool_calls or ()
        ]
        body = "\n".join(x for x in (text, *calls) if x)
    elif isinstance(message, ToolMessage):
        body = f"result of call {message.tool_call_id}: {text_of(message.content)}"
    elif hasattr(message, "content"):
        content = message.content
        body = text_of(content) if not isinstance(content, dict) else json.dumps(content)
    else:  # pragma: no cover - every message of the protocol has content
        body = ""
    return f"{who}: {body}" if body else ""
