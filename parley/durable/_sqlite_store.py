"""The default store of durable chats: one SQLite file.

Every write is its own transaction, committed before the step that made it returns. The
database runs in WAL mode with ``synchronous=FULL`` by default: a commit then waits for the
write-ahead log to reach the disk, so a step recorded survives a power cut, not only the
death of the process. ``synchronous="NORMAL"`` skips that wait (the log is synced only at
checkpoints): it still survives a killed process (the OS holds the write), but a power cut may
lose the last steps, which a resume then runs again.

The connection lives on the store's worker thread (``_store.py``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ._store import BaseChatStore, StepRow

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


class SqliteChatStore(BaseChatStore):
    """Durable chats in the SQLite file ``path`` (see the module docstring for
    ``synchronous``). Pass it as ``initiate_chat(..., store=store, chat_id=...)``."""

    def __init__(self, path: str | Path, *, synchronous: str = "FULL") -> None:
        if synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(f"synchronous must be FULL, EXTRA or NORMAL, got {synchronous!r}")
        self.path = str(path)
        self.synchronous = synchronous.upper()
        self._db: sqlite3.Connection | None = None

    @property
    def location(self) -> str:
        return self.path

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={self.synchronous}")
            db.execute("PRAGMA busy_timeout=10000")  # another process answering an input
            db.executescript(_SCHEMA)
            self._db = db
        return self._db

    def _read_chat(self, chat_id: str) -> tuple[str, str] | None:
        row = (
            self._conn()
            .execute("SELECT header, status FROM chats WHERE chat_id = ?", (chat_id,))
            .fetchone()
        )
        return None if row is None else (str(row[0]), str(row[1]))

    def _create_chat(self, chat_id: str, header: str, now: float) -> bool:
        cursor = self._conn().execute(
            "INSERT INTO chats VALUES (?, ?, 'running', NULL, ?, ?) ON CONFLICT DO NOTHING",
            (chat_id, header, now, now),
        )
        return cursor.rowcount == 1

    def _read_steps(self, chat_id: str) -> list[StepRow]:
        rows = self._conn().execute(
            "SELECT key, seq, start, result, done FROM steps WHERE chat_id = ? ORDER BY seq",
            (chat_id,),
        )
        return [(k, int(n), s, r, bool(d)) for k, n, s, r, d in rows]

    def _write_step(self, chat_id: str, row: StepRow) -> None:
        key, seq, start, result, done = row
        self._conn().execute(
            "INSERT INTO steps VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (chat_id, key) "
            "DO UPDATE SET result = excluded.result, done = excluded.done",
            (chat_id, key, seq, start, result, int(done)),
        )

    def _answer_step(self, chat_id: str, key: str, result: str) -> bool:
        cursor = self._conn().execute(
            "UPDATE steps SET result = ?, done = 1 WHERE chat_id = ? AND key = ? AND done = 0",
            (result, chat_id, key),
        )
        return cursor.rowcount == 1

    def _end_chat(self, chat_id: str, reason: str | None, now: float) -> None:
        self._conn().execute(
            "UPDATE chats SET status = 'done', termination_reason = ?, updated = ? "
            "WHERE chat_id = ?",
            (reason, now, chat_id),
        )

    def _chat_ids(self, status: str | None) -> list[str]:
        sql = "SELECT chat_id FROM chats"
        args: tuple[str, ...] = ()
        if status is not None:
            sql, args = sql + " WHERE status = ?", (status,)
        return [str(r[0]) for r in self._conn().execute(sql + " ORDER BY created", args)]


ChatStore = SqliteChatStore
"""The default store: ``ChatStore("chats.db")``."""
