"""Chat results and chat queues (AutoGen's ``autogen.agentchat.chat``).

``initiate_chats`` runs several chats in a row, ``a_initiate_chats`` runs them by
prerequisites, concurrently; see ``_queue`` for how carryover flows between them and where
parley deliberately differs from AutoGen (the caller's dicts are never modified; the exclude
list holds queue positions in both runners; a repeated recipient or a missing message is
logged rather than warned).

The private helpers below are AutoGen's, kept for code that calls them; each is the face of
the code the queues themselves run (``_queue``, ``_chat_flow``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import _queue
from ._chat_flow import carryover_item_text
from ._chat_result import ChatResult
from ._queue import Prerequisite as Prerequisite
from ._sync_chat import run_sync

__all__ = ["ChatResult", "a_initiate_chats", "initiate_chats"]


def initiate_chats(
    chat_queue: list[dict[str, Any]], *, store: Any = None, chat_id: str | None = None
) -> list[ChatResult]:
    """Run the chats of ``chat_queue`` one after another.

    Each entry holds ``initiate_chat`` arguments plus ``sender``, and optionally ``carryover``,
    ``finished_chat_indexes_to_exclude_from_carryover`` (queue positions) and ``verbose``.
    Every chat's first message carries the summaries of the chats before it. With ``store``
    (parley's addition) the whole queue is durable chat ``chat_id``, resumable with
    ``parley.durable.resume(chat_id, store=store, chat_queue=chat_queue)``.
    """
    return run_sync(_queue.run_sequential(chat_queue, store=store, chat_id=chat_id))


async def a_initiate_chats(
    chat_queue: list[dict[str, Any]], *, store: Any = None, chat_id: str | None = None
) -> dict[Any, ChatResult]:
    """Run the chats of ``chat_queue`` concurrently, each once its ``prerequisites`` (a list of
    ``chat_id``s) have finished; ``{chat_id: ChatResult}``. A chat's carryover is
    its own plus its prerequisites' summaries. ``store`` and ``chat_id`` (the queue's, not an
    entry's) make it durable, as for :func:`initiate_chats`."""
    return await _queue.run_concurrent(chat_queue, store=store, chat_id=chat_id)


# --- AutoGen's private helpers -------------------------------------------------------------------


def _post_process_carryover_item(carryover_item: Any) -> str:
    """A carryover item as text: a str itself, a dict its ``content``, else ``str(item)``."""
    return carryover_item_text(carryover_item)


def _validate_recipients(chat_queue: Sequence[Mapping[str, Any]]) -> None:
    """``AssertionError`` if an entry has no recipient; a ``UserWarning`` if one recipient has
    several chats (its history is cleared between them unless ``clear_history=False``)."""
    if _queue.has_repeated_recipients(chat_queue):
        warnings.warn(_queue.REPEATED_RECIPIENTS, UserWarning, stacklevel=2)


# Module-level double-underscore names are not mangled: `chat.__create_async_prerequisites`
# reaches them from outside a class, as in AutoGen.
def __create_async_prerequisites(chat_queue: Sequence[Mapping[str, Any]]) -> list[Prerequisite]:
    """The ``(chat_id, prerequisite_id)`` pairs of the queue; ``ValueError`` for a chat without
    ``chat_id`` or a prerequisite that is not an int."""
    return _queue.prerequisite_pairs(chat_queue)


def __find_async_chat_order(
    chat_ids: Iterable[int], prerequisites: Iterable[Prerequisite]
) -> list[int]:
    """The chat ids in breadth-first topological order; ``[]`` if some chat can never start
    (a cycle, or a prerequisite that is not in ``chat_ids``)."""
    return _queue.chat_order(chat_ids, prerequisites)


def __post_carryover_processing(chat_info: Mapping[str, Any]) -> None:
    """Before a queued chat: a ``UserWarning`` if it has no ``message`` (the human will be
    asked), then the "Starting a new chat...." banner."""
    if "message" not in chat_info:
        warnings.warn(_queue.missing_message("a chat_queue entry"), UserWarning, stacklevel=2)
    _queue.print_header(chat_info)
