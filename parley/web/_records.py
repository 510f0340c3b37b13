"""What the page's state is made of: a chat's record, a request's, the errors of asking and
answering, and the limits on what is kept."""

from __future__ import annotations

import concurrent.futures
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..usage._run import ChatRun
from ._render import capped

__all__ = [
    "MAX_CONSOLE",
    "MAX_DRAFT",
    "MAX_ENDED_CHATS",
    "MAX_SETTLED_REQUESTS",
    "AnswerRefusedError",
    "ChatRecord",
    "HumanRequest",
    "RequestRecord",
    "Subscriber",
    "WebHumanClosedError",
    "closed_text",
    "encode",
    "fail",
    "trim",
]

Subscriber = Callable[[str | None], None]
"""Receives each change as JSON text, and ``None`` once the hub is closed."""

MAX_CONSOLE = 200_000  # characters of printed output kept per chat (the newest)
MAX_DRAFT = 50_000
MAX_ENDED_CHATS = 100  # ended chats a new page is shown (the newest)
MAX_SETTLED_REQUESTS = 200  # answered, withdrawn or closed requests kept (the newest)


class WebHumanClosedError(EOFError):
    """The web page's server was closed while (or before) a chat asked its human.

    An ``EOFError``, as the builtin ``input()`` raises at the end of its input: the chat that
    asked fails with it rather than going on with an answer nobody gave."""


class AnswerRefusedError(ValueError):
    """An answer that cannot be taken: the request was already answered (the first answer
    wins), withdrawn, or does not exist; or the answer itself is not valid for it."""


@dataclass(frozen=True)
class HumanRequest:
    """A question waiting for the human: a chat's input prompt (``kind="input"``) or a review
    of the message an agent is about to answer (``kind="review"``). A review of a call of a
    tool that requires approval has ``tool_call``: ``{"name", "arguments", "call_id"}``
    (``message`` then holds that one call); a review of code waiting for approval (a
    ``code_execution_config`` with ``"requires_approval": True``) has ``code_blocks``:
    ``[{"language", "code"}]``, the blocks of ``message`` in the order they would run."""

    id: str
    kind: str
    chat_id: str | None
    agent: str | None
    sender: str | None
    prompt: str
    password: bool
    message: dict[str, Any] | None
    tool_call: dict[str, Any] | None = None
    code_blocks: list[dict[str, str]] | None = None


@dataclass(eq=False)
class RequestRecord:
    public: HumanRequest
    created: float = field(default_factory=time.time)
    status: str = "pending"  # answered, withdrawn, closed
    action: str | None = None  # send, approve, reject, stop
    answer: str | None = None
    answered_by: str | None = None  # a page session ("s1"), "api", "stop"
    future: concurrent.futures.Future[str] = field(default_factory=concurrent.futures.Future)

    def view(self) -> dict[str, Any]:
        p = self.public
        return {
            "id": p.id,
            "kind": p.kind,
            "chat_id": p.chat_id,
            "agent": p.agent,
            "sender": p.sender,
            "prompt": capped(p.prompt),
            "password": p.password,
            "message": p.message,
            "tool_call": p.tool_call,
            "code_blocks": p.code_blocks,
            "status": self.status,
            "action": self.action,
            # What a human typed at a password prompt is never shown, not even to the pages.
            "answer": None if p.password else self.answer,
            "answered_by": self.answered_by,
            "created": self.created,
        }


@dataclass(eq=False)
class ChatRecord:
    id: str
    parent_id: str | None
    sender: str | None
    recipient: str | None
    run: ChatRun | None  # while it runs: how the page stops it
    status: str = "running"  # stopping, ended, failed
    termination_reason: str | None = None
    summary: str | None = None
    error: str | None = None
    cost: float = 0.0
    tokens: int = 0
    speaking: list[str] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    positions: dict[int, int] = field(default_factory=dict)  # item id -> index in items
    draft: dict[str, str] | None = None
    console: list[str] = field(default_factory=list)
    console_size: int = 0
    started: float = field(default_factory=time.time)
    ended: float | None = None

    def view(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "parent_id": self.parent_id,
            "title": f"{self.sender or '?'} \u2192 {self.recipient or '?'}",
            "status": self.status,
            "termination_reason": self.termination_reason,
            "summary": self.summary,
            "error": self.error,
            "cost": self.cost,
            "tokens": self.tokens,
            "speaking": self.speaking[-1] if self.speaking else None,
            "started": self.started,
            "ended": self.ended,
        }

    def full_view(self) -> dict[str, Any]:
        return {
            **self.view(),
            "items": self.items,
            "draft": self.draft,
            "console": "".join(self.console),
        }


def encode(event: dict[str, Any]) -> str:
    # ASCII escapes: a lone surrogate from a decoded byte string stays valid JSON and UTF-8.
    return json.dumps(event, default=str)


def fail(future: concurrent.futures.Future[str], error: BaseException) -> None:
    if not future.done():  # an asker that gave up has cancelled it
        future.set_exception(error)


def trim(chunks: list[str], size: int) -> int:
    """Drop the oldest chunks of printed output beyond :data:`MAX_CONSOLE`; the new size."""
    while size > MAX_CONSOLE and len(chunks) > 1:
        size -= len(chunks.pop(0))
    return size


def closed_text(agent: str | None) -> str:
    who = f"{agent} was waiting" if agent else "a chat was waiting"
    return (
        f"the web page for the human was closed (WebHuman.close()) while {who} for an answer; "
        "nobody can answer it"
    )
