"""Durable chats: a chat whose every step is committed to a store, resumable after the
process running it died (``website/docs/durable-chats.md``).

    store = ChatStore("chats.db")
    alice.initiate_chat(bob, message="...", store=store, chat_id="report-42")
    # ... the process dies; in a new one, with the same agents rebuilt:
    result = resume("report-42", store=store, sender=alice, recipient=bob)

The core records and replays through :mod:`parley._journal`; this package holds the stores
and :func:`resume`. Nothing in parley imports it.
"""

from __future__ import annotations

from .._journal import RERUN, SKIP, Journal, Store, UncertainCall
from ._resume import a_resume, resume
from ._sqlite_store import ChatStore, SqliteChatStore

__all__ = [
    "RERUN",
    "SKIP",
    "ChatStore",
    "Journal",
    "SqliteChatStore",
    "Store",
    "UncertainCall",
    "a_resume",
    "resume",
]
