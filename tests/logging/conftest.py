"""Runtime logging tests: a logging session that is always stopped, and chats to log."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parley import runtime_logging

SENTINEL = "sk-SENTINEL-9f8e7d6c5b4a"  # the API key no log may contain


@pytest.fixture(autouse=True)
def _stopped() -> Iterator[None]:
    yield
    runtime_logging.stop()


@pytest.fixture
def dbname(tmp_path: Path) -> str:
    return str(tmp_path / "logs.db")


def rows(con: sqlite3.Connection, table: str, where: str = "", *args: Any) -> list[dict[str, Any]]:
    """AutoGen's analysis idiom: ``SELECT *`` and the cursor's column names."""
    cursor = con.execute(f"SELECT * FROM {table} {where}", args)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def db_bytes(dbname: str) -> bytes:
    """The database file and its WAL, as bytes (what a grep for a secret would read)."""
    out = b""
    for suffix in ("", "-wal", "-shm", "-journal"):
        path = Path(dbname + suffix)
        if path.exists():
            out += path.read_bytes()
    return out
