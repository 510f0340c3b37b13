"""The SQLite logger's two connections: the writer thread's, which owns the database, and
the one ``get_connection()`` hands to users, which waits for the queued records first."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from typing import Any

from ._schema import create
from ._statements import Statement

__all__ = ["Database", "ReaderConnection"]

logger = logging.getLogger("parley.logger.sqlite_logger")


class Database:
    """The writer thread's side: the connection (see ``_writer.Sink``). Rows are held until
    the batch's commit and written a table at a time (see ``_statements``)."""

    def __init__(self, dbname: str) -> None:
        self.dbname = dbname
        self.con: sqlite3.Connection | None = None
        self._pending: dict[Statement, list[tuple[Any, ...]]] = {}

    def open(self) -> None:
        con = sqlite3.connect(self.dbname, timeout=30.0, cached_statements=256)
        try:
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
    each of the methods that read, :data:`_READING`)."""

    flush: Callable[[], object] = staticmethod(lambda: None)


_READING = ("cursor", "execute", "executemany", "executescript")


def _flushing_first(name: str) -> Callable[..., Any]:
    read = getattr(sqlite3.Connection, name)

    def method(self: ReaderConnection, *args: Any, **kwargs: Any) -> Any:
        self.flush()
        return read(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method


for _name in _READING:
    setattr(ReaderConnection, _name, _flushing_first(_name))
