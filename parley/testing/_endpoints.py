"""The two completion endpoints a FakeLLMServer serves: chat completions and OpenAI's legacy
text completions.

What differs between them is said here, once: their paths (OpenAI's, without ``/v1``, and
Azure OpenAI's deployment paths), how a request is checked, how a reply is rendered (a JSON
body or stream events) and which replies cannot answer them. The server treats both alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ._render import Ids, completion_body, stream_events
from ._render_text import text_completion_body, text_stream_events, unsendable
from ._script import Reply
from ._validation import validate_chat_request, validate_completion_request

__all__ = ["CHAT", "ENDPOINTS", "TEXT", "Endpoint"]

Render = Callable[[Reply, Mapping[str, Any], Ids], Any]


def _always_sendable(reply: Reply) -> str | None:
    return None


@dataclass(frozen=True)
class Endpoint:
    """One completion endpoint. ``what`` names its requests in the server's messages;
    ``validate(body, strict=...)`` raises ``RequestError``; ``body`` and ``events`` render a
    reply as a JSON body or as the stream's ``data:`` payloads; ``unsendable(reply)`` says why
    a reply cannot answer this endpoint, or None."""

    what: str
    paths: tuple[str, ...]
    azure: re.Pattern[str]
    validate: Callable[..., None]
    body: Render
    events: Render
    unsendable: Callable[[Reply], str | None] = _always_sendable

    def matches(self, path: str) -> bool:
        return path in self.paths or self.azure.match(path) is not None


CHAT = Endpoint(
    "chat-completion",
    ("/v1/chat/completions", "/chat/completions"),
    # Azure OpenAI: /openai/deployments/<deployment>/chat/completions?api-version=...
    re.compile(r"^/openai/deployments/[^/]+/chat/completions$"),
    validate_chat_request,
    completion_body,
    stream_events,
)
TEXT = Endpoint(
    "text-completion",
    ("/v1/completions", "/completions"),
    re.compile(r"^/openai/deployments/[^/]+/completions$"),
    validate_completion_request,
    text_completion_body,
    text_stream_events,
    unsendable,
)
ENDPOINTS = (CHAT, TEXT)
