"""The default store of durable chats: one SQLite file, a journal of steps per chat.

Every write is its own transaction, committed before the step that made it returns. The
database runs in WAL mode with ``synchronous=FULL`` by default: a commit then waits for the
write-ahead log to reach the disk, so a step recorded survives a power cut, not only the
death of the process. ``synchronous="NORMAL"`` skips that wait (the log is synced only at
checkpoints): it still survives a killed process (the OS holds the write), but a power cut may
lose the last steps, which a resume then runs again.

The connection lives on a thread of its own (``parley-durable``), which runs the writes while
the chat's loop awaits them.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from .. import _journal
from .._runtime import dedicated_worker
from ..exceptions import DurableChatError
from ._resuming import UncertainPolicy, decide, resuming

__all__ = ["ChatStore", "SqliteChatStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chats (
    chat_id TEXT PRIMARY KEY,
    header TEXT NOT NULL,
    status TEXT NOT NULL,
    termination_reason TEXT,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS steps (
    chat_id TEXT NOT NULL,
    key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    start TEXT,
    result TEXT,
    done INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (chat_id, key)
);
"""

_worker = dedicated_worker("parley-durable")


class SqliteChatStore:
    """Durable chats in the SQLite file ``path`` (see the module docstring for
    ``synchronous``). Pass it as ``initiate_chat(..., store=store, chat_id=...)``."""

    def __init__(self, path: str | Path, *, synchronous: str = "FULL") -> None:
        if synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(f"synchronous must be FULL, EXTRA or NORMAL, got {synchronous!r}")
        self.path = str(path)
        self.synchronous = synchronous.upper()
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection:  # on the worker thread only
        if self._db is None:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={self.synchronous}")
            db.executescript(_SCHEMA)
            self._db = db
        return self._db

    async def _run(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        def run() -> list[tuple[Any, ...]]:
            return self._conn().execute(sql, args).fetchall()

        return await _worker.run(run)

    async def header(self, chat_id: str) -> dict[str, Any] | None:
        """What chat ``chat_id`` was started with (None: no such chat)."""
        rows = await self._run("SELECT header FROM chats WHERE chat_id = ?", chat_id)
        return json.loads(rows[0][0]) if rows else None

    async def status(self, chat_id: str) -> str | None:
        """``"running"`` (started, not ended: resumable), ``"done"``, or None (no such chat)."""
        rows = await self._run("SELECT status FROM chats WHERE chat_id = ?", chat_id)
        return str(rows[0][0]) if rows else None

    async def steps(self, chat_id: str) -> list[tuple[str, Any, Any]]:
        """The chat's recorded steps in order: ``(key, start, result)`` (None: not recorded)."""
        rows = await self._run(
            "SELECT key, start, result FROM steps WHERE chat_id = ? ORDER BY seq", chat_id
        )
        return [(k, _load(s), _load(r)) for k, s, r in rows]

    async def open_chat(self, chat_id: str, header: dict[str, Any]) -> _journal.Journal:
        recorded = await self.header(chat_id)
        resume = resuming.get()
        resuming_this = resume is not None and resume.chat_id == chat_id
        if recorded is None:
            now = time.time()
            await self._run(
                "INSERT INTO chats VALUES (?, ?, 'running', NULL, ?, ?)",
                chat_id,
                json.dumps(header),
                now,
                now,
            )
            return _SqliteJournal(self, chat_id, {}, None)
        if not resuming_this:
            raise DurableChatError(
                f"chat {chat_id!r} is already in {self.path}: resume it with "
                "parley.durable.resume, or start a chat with another chat_id"
            )
        for role in ("sender", "recipient"):
            if recorded.get(role) != header.get(role):
                raise DurableChatError(
                    f"chat {chat_id!r} was recorded with {role} {recorded.get(role)!r}, "
                    f"resumed with {header.get(role)!r}"
                )
        rows = await self._run(
            "SELECT key, start, result, done FROM steps WHERE chat_id = ?", chat_id
        )
        entries = {k: _journal.Entry(_load(s), _load(r), bool(d)) for k, s, r, d in rows}
        policy = resume.on_uncertain_tool if resume is not None else None
        return _SqliteJournal(self, chat_id, entries, policy)


ChatStore = SqliteChatStore
"""The default store: ``ChatStore("chats.db")``."""


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


class _SqliteJournal:
    """One chat's journal (``parley._journal.Journal``) over a :class:`SqliteChatStore`: the
    recorded steps are read once, at open; each new one is written through."""

    def __init__(
        self,
        store: SqliteChatStore,
        chat_id: str,
        entries: dict[str, _journal.Entry],
        policy: UncertainPolicy | None,
    ) -> None:
        self._store = store
        self._chat_id = chat_id
        self._entries = entries
        self._policy = policy
        self._counts: defaultdict[tuple[str, str | None, str], int] = defaultdict(int)
        self._seq = len(entries)

    def key(self, kind: str, agent: str | None, ident: str = "") -> str:
        n = self._counts[kind, agent, ident]
        self._counts[kind, agent, ident] = n + 1
        return f"{kind}/{agent or ''}/{ident}#{n}"

    def entry(self, key: str) -> _journal.Entry | None:
        return self._entries.get(key)

    async def start(self, key: str, start: Any) -> None:
        await self._write(key, start, None, False)

    async def finish(self, key: str, result: Any) -> None:
        entry = self._entries.get(key)
        await self._write(key, None if entry is None else entry.start, result, True)

    async def _write(self, key: str, start: Any, result: Any, done: bool) -> None:
        self._seq += 1
        start_text = None if start is None else json.dumps(start)
        result_text = None if result is None else json.dumps(result)
        try:
            await self._store._run(
                "INSERT INTO steps VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (chat_id, key) "
                "DO UPDATE SET result = excluded.result, done = excluded.done",
                self._chat_id,
                key,
                self._seq,
                start_text,
                result_text,
                int(done),
            )
        except TypeError as e:  # json: something a step holds has no JSON form
            raise DurableChatError(f"a durable chat cannot record step {key}: {e}") from e
        self._entries[key] = _journal.Entry(start, result, done)

    async def end(self, termination_reason: str | None) -> None:
        await self._store._run(
            "UPDATE chats SET status = 'done', termination_reason = ?, updated = ? "
            "WHERE chat_id = ?",
            termination_reason,
            time.time(),
            self._chat_id,
        )

    async def uncertain(self, call: _journal.UncertainCall) -> str:
        return await decide(self._policy, call)
