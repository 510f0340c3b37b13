"""The SQLite logger's tables: AutoGen 0.2's, column for column, then parley's additions.

AutoGen's seven tables are created with AutoGen's statements; parley adds columns at their
end (``chat_id`` links a row to its chat; durations; token counts) and two tables: ``chats``
(one row per chat, nested chats pointing at their parent) and ``code_executions``. Code that
reads AutoGen's columns by name (``SELECT *`` with ``cursor.description``, pandas) sees them
unchanged. An AutoGen database gets parley's columns added when parley logs into it.
"""

from __future__ import annotations

import sqlite3

__all__ = ["SCHEMA_VERSION", "create"]

SCHEMA_VERSION = 1  # AutoGen's; parley's additions need no migration of AutoGen's data

_AUTOGEN_TABLES = (
    """
    CREATE TABLE IF NOT EXISTS chat_completions(
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
EXTRA_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "chat_completions": (
        ("chat_id", "TEXT"),
        ("model", "TEXT"),
        ("duration", "REAL"),
        ("prompt_tokens", "INTEGER"),
        ("completion_tokens", "INTEGER"),
        ("total_tokens", "INTEGER"),
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
    "CREATE INDEX IF NOT EXISTS completions_chat ON chat_completions(chat_id)",
    "CREATE INDEX IF NOT EXISTS events_chat ON events(chat_id)",
    "CREATE INDEX IF NOT EXISTS function_calls_chat ON function_calls(chat_id)",
    "CREATE INDEX IF NOT EXISTS code_executions_chat ON code_executions(chat_id)",
)


def create(con: sqlite3.Connection) -> None:
    """Create the tables (keeping what is there), add parley's columns to an older
    database's tables, and record the schema version."""
    for statement in _AUTOGEN_TABLES:
        con.execute(statement)
    for table, columns in EXTRA_COLUMNS.items():
        present = {row[1] for row in con.execute(f"PRAGMA table_info({table})")}
        for name, kind in columns:
            if name not in present:
                con.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
    for statement in _PARLEY_TABLES:
        con.execute(statement)
    con.execute(
        "INSERT OR IGNORE INTO version (id, version_number) VALUES (1, ?)", (SCHEMA_VERSION,)
    )
    con.commit()
