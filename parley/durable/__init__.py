"""Durable chats: a chat whose every step is committed to a store, resumable after the
process running it died (``website/docs/durable-chats.md``).

    store = ChatStore("chats.db")
    alice.initiate_chat(bob, message="...", store=store, chat_id="report-42")
    # ... the process dies; in a new one, with the same agents rebuilt:
    result = resume("report-42", store=store, sender=alice, recipient=bob)

Group chats (``recipient=manager``) and chat queues (``initiate_chats(queue, store=...,
chat_id=...)``, resumed with ``chat_queue=``) are durable the same way. A chat can also stop on
purpose to wait for a human who answers later (:class:`PausingIO`, ``store.pending_inputs()``,
``store.answer()``); an approval (a tool call or code that requires one) waits the same way, its
pending input carrying the call or the code, and ``resume`` then runs exactly that call once,
or gives the model the human's reason for rejecting it.

Every record is signed with a key only the host holds (a forged or altered journal is refused
with :class:`JournalIntegrityError`), and a chat has one running owner at a time (a second
resume of a running chat raises :class:`ChatLeaseError`).

The core records and replays through :mod:`parley._core.journal`; this package holds the stores
and :func:`resume`. Nothing in parley imports it.
"""

from __future__ import annotations

from .._core.journal import RERUN, SKIP, Journal, Store, UncertainCall
from ..exceptions import ChatLeaseError, ChatPaused, JournalIntegrityError
from ._pausing import PausingIO
from ._redis_store import RedisChatStore  # imports redis when a store is made
from ._resume import a_resume, resume
from ._sqlite_store import ChatStore, SqliteChatStore
from ._store import BaseChatStore, PendingInput

__all__ = [
    "RERUN",
    "SKIP",
    "BaseChatStore",
    "ChatLeaseError",
    "ChatPaused",
    "ChatStore",
    "Journal",
    "JournalIntegrityError",
    "PausingIO",
    "PendingInput",
    "RedisChatStore",
    "SqliteChatStore",
    "Store",
    "UncertainCall",
    "a_resume",
    "resume",
]
