"""``ChatResult``, the outcome of a chat (public as ``parley.agentchat.chat.ChatResult``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ChatResult"]


@dataclass
class ChatResult:
    """The outcome of a chat.

    ``chat_history`` is a copy of the initiator's history at the end of the chat (AutoGen
    returned the live list, which a later chat could clear under the caller's feet).
    """

    chat_id: int | None = None
    chat_history: list[dict[str, Any]] | None = None
    summary: str | None = None
    cost: dict[str, Any] | None = None
    human_input: list[str] | None = None
