"""The SQL the SQLite logger writes with, and how a batch of rows reaches the database.

A batch's rows for one table go in as few statements as possible: ``INSERT ... VALUES (...),
(...), ...`` of up to ``_MAX_ROWS`` rows, not one statement per row. Besides saving SQLite's
per-statement work, this matters for the chats: Python's ``sqlite3`` releases the GIL around
every statement it steps, and each release hands the GIL to the event loop's thread and back
(two thread switches per row, about as much CPU as the row itself). Row counts are split into
powers of two so that a handful of statement texts serve every batch (``sqlite3`` caches the
prepared statements). If a multi-row statement fails, its rows are written one by one, so one
bad row loses only itself.
"""

from __future__ import annotations

import logging
import sqlite3
from itertools import chain
from typing import Any

__all__ = [
    "AGENT",
    "CHAT_END",
    "CHAT_START",
    "CLIENT",
    "CODE",
    "COMPLETION",
    "EVENT",
    "FUNCTION",
    "REQUEST_MESSAGE",
    "WRAPPER",
    "Statement",
]

logger = logging.getLogger("parley.logger.sqlite_logger")

# SQLite before 3.32 allows 999 parameters in one statement; every row count stays under that.
_MAX_PARAMETERS = 999
_MAX_ROWS = 128


class Statement:
    """One statement of the log; ``run(con, rows)`` writes a batch of rows with it."""

    def __init__(self, head: str, columns: int = 0, tail: str = "") -> None:
        """``head`` is the SQL before the first ``VALUES`` row (all of it for a statement that is
        not an INSERT, with ``columns=0``), ``columns`` a row's parameter count, ``tail`` the SQL
        after the rows (an ``ON CONFLICT`` clause)."""
        self.head = " ".join(head.split())
        self.tail = " ".join(tail.split())
        self.columns = columns
        self.max_rows = max(1, min(_MAX_ROWS, _MAX_PARAMETERS // columns)) if columns else 1
        self._texts: dict[int, str] = {}

    def sql(self, rows: int = 1) -> str:
        """The statement's text for ``rows`` rows."""
        text = self._texts.get(rows)
        if text is None:
            if not self.columns:
                text = self.head
            else:
                row = "(" + ", ".join("?" * self.columns) + ")"
                text = f"{self.head} VALUES {', '.join([row] * rows)} {self.tail}".rstrip()
            self._texts[rows] = text
        return text

    def run(self, con: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
        """Write ``rows`` (errors are logged with the row's statement, never raised)."""
        if not self.columns:
            for row in rows:
                self._one(con, row)
            return
        start, total = 0, len(rows)
        while start < total:
            count = min(self.max_rows, 1 << ((total - start).bit_length() - 1))
            chunk = rows[start : start + count]
            start += count
            try:
                con.execute(self.sql(count), list(chain.from_iterable(chunk)))
            except sqlite3.Error:
                for row in chunk:
                    self._one(con, row)

    def _one(self, con: sqlite3.Connection, row: tuple[Any, ...]) -> None:
        try:
            con.execute(self.sql(1), row)
        except sqlite3.Error as error:
            logger.error(
                "[SqliteLogger] error running query %s: %s", self.head.split("(")[0], error
            )


COMPLETION = Statement(
    """INSERT INTO completion_records (
        invocation_id, client_id, wrapper_id, session_id, request, response, is_cached, cost,
        start_time, end_time, source_name, chat_id, model, duration, prompt_tokens,
        completion_tokens, total_tokens, transcript, message_count
    )""",
    19,
)
# A message may be offered again (a logger that forgot what it stored): the first one stays.
REQUEST_MESSAGE = Statement(
    "INSERT OR IGNORE INTO request_messages (session_id, transcript, position, message)", 4
)
# An upsert, as AutoGen's: a subclass's constructor may log the same agent again.
AGENT = Statement(
    "INSERT INTO agents (agent_id, wrapper_id, session_id, name, class, init_args, timestamp)",
    7,
    """ON CONFLICT (agent_id, session_id) DO UPDATE SET
        wrapper_id = excluded.wrapper_id, name = excluded.name, class = excluded.class,
        init_args = excluded.init_args, timestamp = excluded.timestamp""",
)
EVENT = Statement(
    """INSERT INTO events (
        source_id, source_name, event_name, agent_module, agent_class_name, json_state,
        timestamp, chat_id, session_id
    )""",
    9,
)
WRAPPER = Statement(
    "INSERT INTO oai_wrappers (wrapper_id, session_id, init_args, timestamp)",
    4,
    "ON CONFLICT (wrapper_id, session_id) DO NOTHING",
)
CLIENT = Statement(
    "INSERT INTO oai_clients (client_id, wrapper_id, session_id, class, init_args, timestamp)",
    6,
    "ON CONFLICT (client_id, session_id) DO NOTHING",
)
FUNCTION = Statement(
    """INSERT INTO function_calls (
        source_id, source_name, function_name, args, returns, timestamp, chat_id, session_id,
        call_id, duration
    )""",
    10,
)
CODE = Statement(
    """INSERT INTO code_executions (
        session_id, chat_id, source_id, source_name, executor, languages, code, exit_code,
        output, start_time, end_time, duration
    )""",
    12,
)
CHAT_START = Statement(
    """INSERT INTO chats (
        chat_id, parent_chat_id, session_id, sender, recipient, message, max_turns, start_time
    )""",
    8,
    "ON CONFLICT (chat_id) DO NOTHING",
)
CHAT_END = Statement(
    """UPDATE chats SET end_time = ?, duration = ?, termination_reason = ?, summary = ?,
        cost = ?, llm_calls = ?, total_tokens = ?, usage = ?
    WHERE chat_id = ?"""
)
