"""The SQLite logger's tables: AutoGen 0.2's, column for column, then parley's additions.

AutoGen's tables are created with AutoGen's statements; parley adds columns at their end
(``chat_id`` links a row to its chat; durations; token counts) and tables: ``chats`` (one
row per chat, nested chats pointing at their parent) and ``code_executions``. Code that
reads AutoGen's columns by name (``SELECT *`` with ``cursor.description``, pandas) sees them
unchanged. An AutoGen database gets parley's columns added when parley logs into it.

``chat_completions`` is a view. Each request repeats its conversation's history, so storing
every request whole makes a chat's log grow with the square of its length (a 200-turn chat:
7 MB of requests, most of it copies) and its writing cost grow with it. Parley stores each
message of a conversation once, in ``request_messages``, and each call's row, in
``completion_records``, holds its request with a mark where the messages go and how many of
its transcript's messages it sent. The view puts the request back together, the very text
AutoGen's logger would have stored; rows that came whole (from an older database, or a
request parley could not split) pass through. Inserting into the view still works (a
trigger), for code that writes AutoGen's table itself. An older database's table is renamed
to ``completion_records`` and keeps its rows.
"""

from __future__ import annotations

import json
import sqlite3

__all__ = ["MESSAGES_MARK", "SCHEMA_VERSION", "create"]

SCHEMA_VERSION = 1  # AutoGen's; parley's additions need no migration of AutoGen's data

# The value a split request's text has instead of its messages (a string no request holds):
# the view replaces its JSON with the messages' JSON array.
MESSAGES_MARK = "\x00parley:messages\x00"
_MARK_JSON = json.dumps(MESSAGES_MARK)  # no NUL in it: \u0000

_AUTOGEN_TABLES = (
    """
    CREATE TABLE IF NOT EXISTS completion_records(
        id INTEGER PRIMARY KEY,
        invocation_id TEXT,
        client_id INTEGER,
        wrapper_id INTEGER,
        session_id TEXT,
        source_name TEXT,
        request TEXT,
        response TEXT,
        is_cached INEGER,
        cost REAL,
        start_time DATETIME DEFAULT CURRENT_TIMESTAMP,
        end_time DATETIME DEFAULT CURRENT_TIMESTAMP)
    """,
    """
    CREATE TABLE IF NOT EXISTS agents (
        id INTEGER PRIMARY KEY,
        agent_id INTEGER,
        wrapper_id INTEGER,
        session_id TEXT,
        name TEXT,
        class TEXT,
        init_args TEXT,
        timestamp DATETIME DEFAULT CURRENT_TIMESTAMP,
        UNIQUE(agent_id, session_id))
    """,
    """
    CREATE TABLE IF NOT EXISTS oai_wrappers (
        id INTEGER PRIMARY KEY,
        wrapper_id INTEGER,
        session_id TEXT,
        init_args TEXT,
        timestamp DATETIME DEFAULT CURRENT_TIMESTAMP,
        UNIQUE(wrapper_id, session_id))
    """,
    """
    CREATE TABLE IF NOT EXISTS oai_clients (
        id INTEGER PRIMARY KEY,
        client_id INTEGER,
        wrapper_id INTEGER,
        session_id TEXT,
        class TEXT,
        init_args TEXT,
        timestamp DATETIME DEFAULT CURRENT_TIMESTAMP,
        UNIQUE(client_id, session_id))
    """,
    """
    CREATE TABLE IF NOT EXISTS version (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        version_number INTEGER NOT NULL)
    """,
    """
    CREATE TABLE IF NOT EXISTS events (
        event_name TEXT,
        source_id INTEGER,
        source_name TEXT,
        agent_module TEXT DEFAULT NULL,
        agent_class_name TEXT DEFAULT NULL,
        id INTEGER PRIMARY KEY,
        json_state TEXT,
        timestamp DATETIME DEFAULT CURRENT_TIMESTAMP)
    """,
    """
    CREATE TABLE IF NOT EXISTS function_calls (
        source_id INTEGER,
        source_name TEXT,
        function_name TEXT,
        args TEXT DEFAULT NULL,
        returns TEXT DEFAULT NULL,
        timestamp DATETIME DEFAULT CURRENT_TIMESTAMP)
    """,
)

# Columns parley adds at the end of AutoGen's tables.
_COMPLETION_COLUMNS = (
    ("chat_id", "TEXT"),
    ("model", "TEXT"),
    ("duration", "REAL"),
    ("prompt_tokens", "INTEGER"),
    ("completion_tokens", "INTEGER"),
    ("total_tokens", "INTEGER"),
)
EXTRA_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    # The last two say where a split request's messages are (see the module docstring).
    "completion_records": (
        *_COMPLETION_COLUMNS,
        ("transcript", "INTEGER"),
        ("message_count", "INTEGER"),
    ),
    "events": (("chat_id", "TEXT"), ("session_id", "TEXT")),
    "function_calls": (
        ("chat_id", "TEXT"),
        ("session_id", "TEXT"),
        ("call_id", "TEXT"),
        ("duration", "REAL"),
    ),
}

_PARLEY_TABLES = (
    """
    CREATE TABLE IF NOT EXISTS chats (
        id INTEGER PRIMARY KEY,
        chat_id TEXT UNIQUE,
        parent_chat_id TEXT,
        session_id TEXT,
        sender TEXT,
        recipient TEXT,
        message TEXT,
        max_turns INTEGER,
        start_time DATETIME,
        end_time DATETIME,
        duration REAL,
        termination_reason TEXT,
        summary TEXT,
        cost REAL,
        llm_calls INTEGER,
        total_tokens INTEGER,
        usage TEXT)
    """,
    """
    CREATE TABLE IF NOT EXISTS code_executions (
        id INTEGER PRIMARY KEY,
        session_id TEXT,
        chat_id TEXT,
        source_id INTEGER,
        source_name TEXT,
        executor TEXT,
        languages TEXT,
        code TEXT,
        exit_code INTEGER,
        output TEXT,
        start_time DATETIME,
        end_time DATETIME,
        duration REAL)
    """,
    "CREATE INDEX IF NOT EXISTS chats_parent ON chats(parent_chat_id)",
    """
    CREATE TABLE IF NOT EXISTS request_messages (
        session_id TEXT,
        transcript INTEGER,
        position INTEGER,
        message TEXT,
        PRIMARY KEY (session_id, transcript, position)) WITHOUT ROWID
    """,
    "CREATE INDEX IF NOT EXISTS completions_chat ON completion_records(chat_id)",
    "CREATE INDEX IF NOT EXISTS events_chat ON events(chat_id)",
    "CREATE INDEX IF NOT EXISTS function_calls_chat ON function_calls(chat_id)",
    "CREATE INDEX IF NOT EXISTS code_executions_chat ON code_executions(chat_id)",
)


_AUTOGEN_COMPLETION_COLUMNS = (
    "id, invocation_id, client_id, wrapper_id, session_id, source_name, request, response, "
    "is_cached, cost, start_time, end_time"
)
_VIEW = f"""
    CREATE VIEW IF NOT EXISTS chat_completions AS SELECT
        c.id, c.invocation_id, c.client_id, c.wrapper_id, c.session_id, c.source_name,
        CASE WHEN c.transcript IS NULL THEN c.request ELSE replace(c.request, '{_MARK_JSON}',
            (SELECT '[' || coalesce(group_concat(m.message, ', '), '') || ']' FROM (
                SELECT message FROM request_messages
                WHERE session_id = c.session_id AND transcript = c.transcript
                    AND position < c.message_count
                ORDER BY position) AS m))
        END AS request,
        c.response, c.is_cached, c.cost, c.start_time, c.end_time,
        {", ".join(f"c.{name}" for name, _ in _COMPLETION_COLUMNS)}
    FROM completion_records AS c
"""
_VIEW_INSERT = f"""
    CREATE TRIGGER IF NOT EXISTS chat_completions_insert INSTEAD OF INSERT ON chat_completions
    BEGIN
        INSERT INTO completion_records ({_AUTOGEN_COMPLETION_COLUMNS},
            {", ".join(name for name, _ in _COMPLETION_COLUMNS)})
        VALUES ({", ".join(f"NEW.{c.strip()}" for c in _AUTOGEN_COMPLETION_COLUMNS.split(","))},
            {", ".join(f"NEW.{name}" for name, _ in _COMPLETION_COLUMNS)});
    END
"""


def _kind(con: sqlite3.Connection, name: str) -> str | None:
    row = con.execute("SELECT type FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    return None if row is None else str(row[0])


def create(con: sqlite3.Connection) -> None:
    """Create the tables (keeping what is there), add parley's columns to an older
    database's tables, and record the schema version."""
    if _kind(con, "chat_completions") == "table":
        # An AutoGen (or older parley) database: its rows keep their whole requests.
        con.execute("ALTER TABLE chat_completions RENAME TO completion_records")
    for statement in _AUTOGEN_TABLES:
        con.execute(statement)
    for table, columns in EXTRA_COLUMNS.items():
        present = {row[1] for row in con.execute(f"PRAGMA table_info({table})")}
        for name, kind in columns:
            if name not in present:
                con.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
    for statement in _PARLEY_TABLES:
        con.execute(statement)
    con.execute(_VIEW)
    con.execute(_VIEW_INSERT)
    con.execute(
        "INSERT OR IGNORE INTO version (id, version_number) VALUES (1, ?)", (SCHEMA_VERSION,)
    )
    con.commit()
