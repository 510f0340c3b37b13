"""Chat results and chat queues (AutoGen's ``autogen.agentchat.chat``).

``initiate_chats`` runs several chats in a row, ``a_initiate_chats`` runs them by
prerequisites, concurrently; see ``_queue`` for how carryover flows between them and where
parley deliberately differs from AutoGen (the caller's dicts are never modified; the exclude
list holds queue positions in both runners).
"""

from __future__ import annotations

from typing import Any

from . import _queue
from ._chat_result import ChatResult
from ._sync_chat import run_sync

__all__ = ["ChatResult", "a_initiate_chats", "initiate_chats"]


def initiate_chats(chat_queue: list[dict[str, Any]]) -> list[ChatResult]:
    """Run the chats of ``chat_queue`` one after another.

    Each entry holds ``initiate_chat`` arguments plus ``sender``, and optionally ``carryover``,
    ``finished_chat_indexes_to_exclude_from_carryover`` (queue positions) and ``verbose``.
    Every chat's first message carries the summaries of the chats before it.
    """
    return run_sync(_queue.run_sequential(chat_queue))


async def a_initiate_chats(chat_queue: list[dict[str, Any]]) -> dict[Any, ChatResult]:
    """Run the chats of ``chat_queue`` concurrently, each once its ``prerequisites`` (a list of
    ``chat_id``s) have finished; ``{chat_id: ChatResult}``. A chat's carryover is
    its own plus its prerequisites' summaries."""
    return await _queue.run_concurrent(chat_queue)
