"""The SQLite logger's two connections: the writer thread's, which owns the database, and
the one ``get_connection()`` hands to users, which waits for the queued records first."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from typing import Any

from ._schema import create

__all__ = ["Database", "ReaderConnection"]

logger = logging.getLogger("parley.logger.sqlite_logger")


class Database:
    """The writer thread's side: the connection (see ``_writer.Sink``)."""

    def __init__(self, dbname: str) -> None:
        self.dbname = dbname
        self.con: sqlite3.Connection | None = None

    def open(self) -> None:
        con = sqlite3.connect(self.dbname, timeout=30.0)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            create(con)
        except BaseException:
            con.close()
            raise
        self.con = con

    def run(self, query: str, args: tuple[Any, ...]) -> None:
        assert self.con is not None
        try:
            self.con.execute(query, args)
        except sqlite3.Error as error:
            logger.error("[SqliteLogger] error running query %s: %s", query.split("(")[0], error)

    def commit(self) -> None:
        if self.con is not None:
            self.con.commit()

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None


class ReaderConnection(sqlite3.Connection):
    """The connection ``get_connection()`` hands out: waits for queued records first."""

    flush: Callable[[], object] = staticmethod(lambda: None)

    def cursor(self, *args: Any, **kwargs: Any) -> Any:
        self.flush()
        return super().cursor(*args, **kwargs)

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        self.flush()
        return super().execute(*args, **kwargs)

    def executemany(self, *args: Any, **kwargs: Any) -> Any:
        self.flush()
        return super().executemany(*args, **kwargs)

    def executescript(self, *args: Any, **kwargs: Any) -> Any:
        self.flush()
        return super().executescript(*args, **kwargs)
