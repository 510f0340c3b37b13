"""The SQLite logger's two connections: the writer thread's, which owns the database, and
the one ``get_connection()`` hands to users, which waits for the queued records first.

An in-memory database (``":memory:"``, or ``""``) is private to the connection that made it,
so the two connections open one shared in-memory database by a URI of the logger's own
instead; it lives while either is open, as AutoGen's lived while its one connection was. The
user's connection reads uncommitted rows there, so that its reads never wait on the writer's
table locks (shared-cache databases lock tables, not files).
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
from collections.abc import Callable
from typing import Any

from ._schema import create
from ._statements import Statement

__all__ = ["Database", "ReaderConnection", "connect_reader"]

logger = logging.getLogger("parley.logger.sqlite_logger")


class Database:
    """The writer thread's side: the connection (see ``_writer.Sink``). Rows are held until
    the batch's commit and written a table at a time (see ``_statements``)."""

    def __init__(self, dbname: str) -> None:
        self.dbname = dbname
        self.in_memory = dbname in ("", ":memory:")
        # Where both connections find the database (see the module docstring).
        self.target = (
            f"file:parley-log-{uuid.uuid4().hex}?mode=memory&cache=shared"
            if self.in_memory
            else dbname
        )
        self.con: sqlite3.Connection | None = None
        self._pending: dict[Statement, list[tuple[Any, ...]]] = {}

    def open(self) -> None:
        con = sqlite3.connect(self.target, timeout=30.0, cached_statements=256, uri=self.in_memory)
        try:
            if not self.in_memory:
                con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            create(con)
        except BaseException:
            con.close()
            raise
        self.con = con

    def run(self, statement: Statement, row: tuple[Any, ...]) -> None:
        """Queue ``row`` for ``statement`` (written at the next commit)."""
        if not statement.columns:
            # An UPDATE may refer to rows still pending: they go first, in order.
            self._write_pending()
            assert self.con is not None
            statement.run(self.con, [row])
            return
        rows = self._pending.get(statement)
        if rows is None:
            self._pending[statement] = [row]
        else:
            rows.append(row)

    def _write_pending(self) -> None:
        pending, self._pending = self._pending, {}
        if self.con is not None:
            for statement, rows in pending.items():
                statement.run(self.con, rows)

    def commit(self) -> None:
        self._write_pending()
        if self.con is not None:
            self.con.commit()

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None


class ReaderConnection(sqlite3.Connection):
    """The connection ``get_connection()`` hands out: waits for queued records first (before
    each of the methods that read, :data:`_READING`), and so do its cursors, however long ago
    they were made (AutoGen's users take a cursor, run a chat, then query)."""

    flush: Callable[[], object] = staticmethod(lambda: None)

    def cursor(self, factory: Any = None) -> Any:  # sqlite3's signature, typed loosely
        self.flush()
        return sqlite3.Connection.cursor(self, factory or ReaderCursor)


class ReaderCursor(sqlite3.Cursor):
    """A cursor of a :class:`ReaderConnection`: waits for queued records before it reads."""

    connection: ReaderConnection


def connect_reader(database: Database, flush: Callable[[], object]) -> ReaderConnection:
    """A new :class:`ReaderConnection` to ``database``, flushing with ``flush``."""
    reader = sqlite3.connect(
        database.target,
        timeout=30.0,
        check_same_thread=False,
        factory=ReaderConnection,
        uri=database.in_memory,
    )
    if database.in_memory:
        reader.execute("PRAGMA read_uncommitted = 1")
    reader.flush = flush
    return reader


_READING = ("execute", "executemany", "executescript")


def _flushing_first(name: str, base: Any) -> Callable[..., Any]:
    read = getattr(base, name)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        owner = self if isinstance(self, ReaderConnection) else self.connection
        owner.flush()
        return read(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method


for _name in _READING:
    setattr(ReaderConnection, _name, _flushing_first(_name, sqlite3.Connection))
    setattr(ReaderCursor, _name, _flushing_first(_name, sqlite3.Cursor))
