"""Calling a store's blocking primitives from a chat: on the stores' worker thread
(``parley-durable``), and, for a journal's writes, under the run's lease.

A backend's primitives (``BaseChatStore.write_step``, ...) only say who holds the lease when a
write is refused; what a run does then (stop, with :class:`~parley.exceptions.ChatLeaseError`)
is decided here, once, for the journal (``_store_journal.py``) and the store's own writes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from .._core.runtime import dedicated_worker
from ..exceptions import ChatLeaseError
from ._lease import Lease, release
from ._records import StepRow

if TYPE_CHECKING:
    from ._store import BaseChatStore

__all__ = ["checked_end", "checked_write", "let_go", "on_worker"]

T = TypeVar("T")

_worker = dedicated_worker("parley-durable")


async def on_worker(work: Callable[[], T]) -> T:
    """Run a blocking primitive on the stores' worker thread; a backend may hold a blocking
    connection, which belongs to that thread."""
    return await _worker.run(work)


async def checked_write(store: BaseChatStore, chat_id: str, row: StepRow, owner: str) -> None:
    """Write a step if ``owner`` still holds the chat's lease; else ChatLeaseError (lost)."""
    holder = await on_worker(partial(store.write_step, chat_id, row, owner))
    if holder is not None:
        raise _lost(chat_id, holder, f"step {row[0]}")


async def checked_end(store: BaseChatStore, chat_id: str, reason: str | None, owner: str) -> None:
    """Mark the chat done and drop ``owner``'s lease; ChatLeaseError (lost) if another run
    holds it."""
    holder = await on_worker(partial(store.end_chat, chat_id, reason, time.time(), owner))
    if holder is not None:
        raise _lost(chat_id, holder, "its end")


async def let_go(store: BaseChatStore, lease: Lease) -> None:
    """Stop renewing ``lease`` and release it in the store."""
    release(lease)
    await on_worker(partial(store.release_lease, lease.chat_id, lease.owner))


def _lost(chat_id: str, holder: str, what: str) -> ChatLeaseError:
    return ChatLeaseError(
        chat_id,
        holder,
        f"durable chat {chat_id!r} lost its lease to {holder} before {what} was recorded: this "
        "run stalled past lease_seconds and another one took the chat over, so this one stops",
        lost=True,
    )
