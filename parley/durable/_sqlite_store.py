"""The default store of durable chats: one SQLite file.

Every write is its own transaction, committed before the step that made it returns. The
database runs in WAL mode with ``synchronous=FULL`` by default: a commit then waits for the
write-ahead log to reach the disk, so a step recorded survives a power cut, not only the
death of the process. ``synchronous="NORMAL"`` skips that wait (the log is synced only at
checkpoints): it still survives a killed process (the OS holds the write), but a power cut may
lose the last steps, which a resume then runs again.

Each thread using the store has its own connection: the store's worker thread (``_store.py``)
and the lease thread (``_lease.py``). A step is written in one transaction with the check that
the run writing it holds the chat's lease.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .._protected_paths import protect
from ._lease import LEASE_SECONDS, RELEASED
from ._records import StepRow
from ._store import BaseChatStore

__all__ = ["ChatStore", "SqliteChatStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chats (
    chat_id TEXT PRIMARY KEY,
    header TEXT NOT NULL,
    status TEXT NOT NULL,
    termination_reason TEXT,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    mac TEXT
);
CREATE TABLE IF NOT EXISTS steps (
    chat_id TEXT NOT NULL,
    key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    start TEXT,
    result TEXT,
    done INTEGER NOT NULL DEFAULT 0,
    mac TEXT,
    PRIMARY KEY (chat_id, key)
);
CREATE TABLE IF NOT EXISTS leases (
    chat_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires REAL NOT NULL
);
"""
# The files SQLite keeps beside the database: code able to write any of them can rewrite it.
_SIBLINGS = ("", "-wal", "-shm", "-journal")


class SqliteChatStore(BaseChatStore):
    """Durable chats in the SQLite file ``path`` (see the module docstring for
    ``synchronous``; ``key`` and ``lease_seconds``: :class:`BaseChatStore`). Pass it as
    ``initiate_chat(..., store=store, chat_id=...)``.

    The file and its ``-wal``, ``-shm`` and ``-journal`` siblings are registered as protected:
    the code executors refuse a work dir that holds them (``parley/_protected_paths.py``)."""

    def __init__(
        self,
        path: str | Path,
        *,
        synchronous: str = "FULL",
        key: bytes | str | None = None,
        lease_seconds: float = LEASE_SECONDS,
    ) -> None:
        if synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(f"synchronous must be FULL, EXTRA or NORMAL, got {synchronous!r}")
        super().__init__(key=key, lease_seconds=lease_seconds)
        self.path = str(path)
        self.synchronous = synchronous.upper()
        for suffix in _SIBLINGS:
            protect(self.path + suffix, "a durable chat store")
        # One connection per thread: the store's worker, and the lease thread's renewals.
        self._local = threading.local()

    @property
    def location(self) -> str:
        return self.path

    def _conn(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={self.synchronous}")
            db.execute("PRAGMA busy_timeout=10000")  # another process writing
            db.executescript(_SCHEMA)
            for table in ("chats", "steps"):  # a file an older parley made: no MACs yet
                columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                if "mac" not in columns:
                    try:
                        db.execute(f"ALTER TABLE {table} ADD COLUMN mac TEXT")
                    except sqlite3.OperationalError as e:
                        if "duplicate column" not in str(e):
                            raise
            self._local.db = db
        return db

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        db = self._conn()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def read_chat(self, chat_id: str) -> tuple[str, str, str | None] | None:
        row = (
            self._conn()
            .execute("SELECT header, status, mac FROM chats WHERE chat_id = ?", (chat_id,))
            .fetchone()
        )
        return None if row is None else (str(row[0]), str(row[1]), row[2])

    def create_chat(self, chat_id: str, header: str, mac: str, now: float) -> bool:
        cursor = self._conn().execute(
            "INSERT INTO chats VALUES (?, ?, 'running', NULL, ?, ?, ?) ON CONFLICT DO NOTHING",
            (chat_id, header, now, now, mac),
        )
        return cursor.rowcount == 1

    def sign_header(self, chat_id: str, mac: str) -> None:
        self._conn().execute("UPDATE chats SET mac = ? WHERE chat_id = ?", (mac, chat_id))

    def read_steps(self, chat_id: str) -> list[StepRow]:
        rows = self._conn().execute(
            "SELECT key, seq, start, result, done, mac FROM steps WHERE chat_id = ? ORDER BY seq",
            (chat_id,),
        )
        # As stored: a value of the wrong type is refused by the MAC check (``_records``).
        return [(str(k), n, s, r, bool(d), m) for k, n, s, r, d, m in rows]

    def _holder(self, db: sqlite3.Connection, chat_id: str, owner: str) -> str | None:
        """In a transaction: None if ``owner`` holds the lease, else who does. Never taken
        here: a run whose lease was released or taken over must not write again."""
        row = db.execute("SELECT owner FROM leases WHERE chat_id = ?", (chat_id,)).fetchone()
        if row is None:
            return RELEASED
        return None if row[0] == owner else str(row[0])

    def write_step(self, chat_id: str, row: StepRow, owner: str) -> str | None:
        key, seq, start, result, done, mac = row
        with self._transaction() as db:
            holder = self._holder(db, chat_id, owner)
            if holder is None:
                db.execute(
                    "INSERT INTO steps VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (chat_id, key) "
                    "DO UPDATE SET result = excluded.result, done = excluded.done, "
                    "mac = excluded.mac",
                    (chat_id, key, seq, start, result, int(done), mac),
                )
        return holder

    def answer_step(self, chat_id: str, key: str, result: str, mac: str) -> bool:
        cursor = self._conn().execute(
            "UPDATE steps SET result = ?, done = 1, mac = ? "
            "WHERE chat_id = ? AND key = ? AND done = 0",
            (result, mac, chat_id, key),
        )
        return cursor.rowcount == 1

    def end_chat(self, chat_id: str, reason: str | None, now: float, owner: str) -> str | None:
        with self._transaction() as db:
            holder = self._holder(db, chat_id, owner)
            if holder is None:
                db.execute(
                    "UPDATE chats SET status = 'done', termination_reason = ?, updated = ? "
                    "WHERE chat_id = ?",
                    (reason, now, chat_id),
                )
                db.execute("DELETE FROM leases WHERE chat_id = ?", (chat_id,))
        return holder

    def chat_ids(self, status: str | None) -> list[str]:
        sql = "SELECT chat_id FROM chats"
        args: tuple[str, ...] = ()
        if status is not None:
            sql, args = sql + " WHERE status = ?", (status,)
        return [str(r[0]) for r in self._conn().execute(sql + " ORDER BY created", args)]

    def claim_lease(self, chat_id: str, owner: str, seconds: float, dead: str) -> str | None:
        with self._transaction() as db:
            now = time.time()
            row = db.execute(
                "SELECT owner, expires FROM leases WHERE chat_id = ?", (chat_id,)
            ).fetchone()
            if row is not None and row[0] not in (owner, dead) and row[1] > now:
                return str(row[0])
            db.execute(
                "INSERT INTO leases VALUES (?, ?, ?) ON CONFLICT (chat_id) "
                "DO UPDATE SET owner = excluded.owner, expires = excluded.expires",
                (chat_id, owner, now + seconds),
            )
        return None

    def renew_lease(self, chat_id: str, owner: str, seconds: float) -> bool:
        with self._transaction() as db:
            holder = self._holder(db, chat_id, owner)
            if holder is None:
                db.execute(
                    "UPDATE leases SET expires = ? WHERE chat_id = ?",
                    (time.time() + seconds, chat_id),
                )
        return holder is None

    def release_lease(self, chat_id: str, owner: str) -> None:
        self._conn().execute("DELETE FROM leases WHERE chat_id = ? AND owner = ?", (chat_id, owner))


ChatStore = SqliteChatStore
"""The default store: ``ChatStore("chats.db")``."""
