"""``ChatResult``, the outcome of a chat (public as ``parley.agentchat.chat.ChatResult``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..usage import Usage

__all__ = ["ChatResult"]


@dataclass
class ChatResult:
    """The outcome of a chat.

    ``chat_history`` is a copy of the initiator's history at the end of the chat (AutoGen
    returned the live list, which a later chat could clear under the caller's feet).

    ``cost`` (AutoGen's shape) and ``usage`` (a :class:`parley.usage.Usage`, per agent, model
    and chat) are what this chat spent: every model call it caused, its group's speaker
    selection, its summary, its nested chats and the tools that called models included
    (AutoGen reported the two agents' running totals since their last reset).

    ``termination_reason`` says why the chat ended: ``"max_turns"``, ``"is_termination_msg"``,
    ``"human_exit"``, ``"max_consecutive_auto_reply"``, ``"max_round"`` (a group chat),
    ``"no_eligible_speaker"``, ``"no_reply"`` (an agent had nothing to say), or a budget's
    ``"budget:cost"``, ``"budget:tokens"``, ``"budget:llm_calls"``, ``"budget:seconds"``.
    ``run_id`` identifies the chat in logs and traces.

    ``parsed`` (parley's own) is the object of the chat's last typed reply: the last message
    in ``chat_history`` from an agent whose ``llm_config`` has a ``response_format``, parsed
    by it (a pydantic model instance, or plain JSON values for a schema dict); None when no
    such reply was made. The history keeps the reply's JSON text.
    """

    chat_id: int | None = None
    chat_history: list[dict[str, Any]] | None = None
    summary: str | None = None
    cost: dict[str, Any] | None = None
    human_input: list[str] | None = None
    termination_reason: str | None = None
    usage: Usage | None = None
    run_id: str | None = None
    parsed: Any = None
