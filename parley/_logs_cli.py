"""``parley logs PATH [CHAT_ID]``: what a runtime log database holds (``runtime_logging``).

Without a chat id: the chats logged there, one row each (nested chats indented under their
parent), with their messages, model calls, cost and why they ended. With one (a unique prefix
suffices): that chat's transcript, its cost per agent and per model (nested chats included),
and where its time went. A database written by AutoGen itself has no ``chats`` table: its
sessions are listed instead.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from .usage._view import render_table

__all__ = ["add_parser", "run"]

_ID = 8  # characters of a chat id shown


class _Refusal(Exception):
    """A clear "cannot do that" for the user (exit code 1)."""


def add_parser(sub: Any) -> None:
    """Add ``logs`` to the ``parley`` command's subcommands (``sub``, from add_subparsers)."""
    parser = sub.add_parser("logs", help="list the chats of a runtime log database, or show one")
    parser.add_argument("path", help="the database runtime_logging.start() wrote (logs.db)")
    parser.add_argument("chat_id", nargs="?", help="a chat's id (a unique prefix suffices)")


def run(args: argparse.Namespace) -> int:
    """Carry out ``parley logs ...``; the exit code."""
    try:
        with _open(args.path) as con:
            text = show_chat(con, args.chat_id) if args.chat_id else list_chats(con)
    except _Refusal as refusal:
        print(f"parley logs: {refusal}", file=sys.stderr)
        return 1
    print(text)
    return 0


class _open:
    def __init__(self, path: str) -> None:
        if not Path(path).is_file():
            raise _Refusal(f"{path}: no such file")
        self.path = path
        self.con = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)

    def __enter__(self) -> sqlite3.Connection:
        try:
            tables = _tables(self.con)
        except sqlite3.DatabaseError as error:
            self.con.close()
            raise _Refusal(f"{self.path}: not a SQLite database ({error})") from None
        if "chat_completions" not in tables and "chats" not in tables:
            self.con.close()
            raise _Refusal(f"{self.path}: not a runtime log (no chat_completions or chats table)")
        return self.con

    def __exit__(self, *exc: object) -> None:
        self.con.close()


def _tables(con: sqlite3.Connection) -> set[str]:
    return {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


# -- the list ------------------------------------------------------------------------------


def list_chats(con: sqlite3.Connection) -> str:
    """The table of chats (or of sessions, for a database AutoGen wrote)."""
    if "chats" not in _tables(con):
        return _autogen_sessions(con)
    chats = con.execute(
        "SELECT chat_id, parent_chat_id, start_time, sender, recipient, termination_reason "
        "FROM chats ORDER BY id"
    ).fetchall()
    if not chats:
        return "no chats logged"
    tree = _Tree(con)
    messages = dict(
        con.execute(
            "SELECT chat_id, COUNT(*) FROM events WHERE event_name = 'received_message' "
            "GROUP BY chat_id"
        ).fetchall()
    )
    rows = []
    for chat_id, _parent, start, sender, recipient, reason in chats:
        calls, cost = tree.spend(chat_id)
        rows.append(
            [
                "  " * tree.depth(chat_id) + chat_id[:_ID],
                _time(start),
                f"{sender} -> {recipient}",
                str(messages.get(chat_id, 0)),
                str(calls),
                f"{cost:.6f}",
                reason or "(running)",
            ]
        )
    header = [
        "chat",
        "start (UTC)",
        "sender -> recipient",
        "messages",
        "llm calls",
        "cost (USD)",
        "ended by",
    ]
    return render_table(header, rows)


def _autogen_sessions(con: sqlite3.Connection) -> str:
    rows = [
        [str(session)[:_ID], _time(first), _time(last), str(calls), f"{cost or 0.0:.6f}"]
        for session, first, last, calls, cost in con.execute(
            "SELECT session_id, MIN(start_time), MAX(end_time), COUNT(*), "
            "SUM(CASE WHEN is_cached THEN 0 ELSE cost END) FROM chat_completions "
            "GROUP BY session_id ORDER BY MIN(start_time)"
        )
    ]
    note = (
        "this database has no chats table (it was written by AutoGen, not parley): "
        "its sessions' model calls are shown; chats and transcripts need a parley log"
    )
    if not rows:
        return note + "\n\nno model calls logged"
    header = ["session", "first call (UTC)", "last call (UTC)", "llm calls", "cost (USD)"]
    return note + "\n\n" + render_table(header, rows)


class _Tree:
    """The chats' parent links and each chat's own model calls."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.parent: dict[str, str | None] = dict(
            con.execute("SELECT chat_id, parent_chat_id FROM chats").fetchall()
        )
        self.children: dict[str | None, list[str]] = defaultdict(list)
        for chat, parent in self.parent.items():
            self.children[parent].append(chat)
        self.own: dict[str, tuple[int, float]] = {
            chat: (calls, cost or 0.0)
            for chat, calls, cost in con.execute(
                "SELECT chat_id, COUNT(*), SUM(cost) FROM chat_completions "
                "WHERE NOT is_cached GROUP BY chat_id"
            )
        }

    def depth(self, chat: str) -> int:
        depth, parent = 0, self.parent.get(chat)
        while parent is not None and depth < 50:
            depth, parent = depth + 1, self.parent.get(parent)
        return depth

    def subtree(self, chat: str) -> list[str]:
        out, stack = [], [chat]
        while stack:
            current = stack.pop()
            out.append(current)
            stack.extend(self.children.get(current, ()))
        return out

    def spend(self, chat: str) -> tuple[int, float]:
        calls, cost = 0, 0.0
        for member in self.subtree(chat):
            own_calls, own_cost = self.own.get(member, (0, 0.0))
            calls, cost = calls + own_calls, cost + own_cost
        return calls, cost


# -- one chat ------------------------------------------------------------------------------


def show_chat(con: sqlite3.Connection, prefix: str) -> str:
    """One chat: header, transcript, costs per agent and per model, timings."""
    if "chats" not in _tables(con):
        raise _Refusal(
            "this database has no chats table (it was written by AutoGen, not parley): "
            "chats cannot be shown; run `parley logs PATH` for its sessions"
        )
    matches = [
        row[0]
        for row in con.execute(
            "SELECT chat_id FROM chats WHERE substr(chat_id, 1, ?) = ?", (len(prefix), prefix)
        )
    ]
    if not matches:
        raise _Refusal(f"no chat with an id starting with {prefix!r}")
    if len(matches) > 1:
        shown = ", ".join(m[: _ID + 4] for m in matches[:10])
        raise _Refusal(f"{len(matches)} chats have ids starting with {prefix!r}: {shown}")
    chat = matches[0]
    tree = _Tree(con)
    members = tree.subtree(chat)
    marks = ",".join("?" * len(members))
    parts = [
        _header(con, chat, tree),
        "Transcript\n" + _transcript(con, chat, tree),
        "Cost per agent (with nested chats)\n"
        + _costs(con, "source_name", "agent", members, marks),
        "Cost per model (with nested chats)\n" + _costs(con, "model", "model", members, marks),
        "Time (with nested chats)\n" + _timings(con, chat, members, marks),
    ]
    return "\n\n".join(parts)


def _header(con: sqlite3.Connection, chat: str, tree: _Tree) -> str:
    (start, end, sender, recipient, reason, summary, parent, session) = con.execute(
        "SELECT start_time, end_time, sender, recipient, termination_reason, summary, "
        "parent_chat_id, session_id FROM chats WHERE chat_id = ?",
        (chat,),
    ).fetchone()
    lines = [
        f"chat {chat}: {sender} -> {recipient} (session {session})",
        f"started {_time(start)} UTC, ended {_time(end) if end else '(not ended)'}"
        + (f", ended by: {reason}" if reason else ""),
    ]
    if parent:
        lines.append(f"nested in chat {parent}")
    nested = tree.children.get(chat, [])
    if nested:
        lines.append("nested chats: " + ", ".join(c[:_ID] for c in nested))
    if summary:
        lines.append(f"summary: {summary}")
    return "\n".join(lines)


def _transcript(con: sqlite3.Connection, chat: str, tree: _Tree) -> str:
    nested = set(tree.children.get(chat, ()))
    ids = [chat, *nested]
    rows = con.execute(
        f"SELECT event_name, source_name, json_state, chat_id FROM events "
        f"WHERE chat_id IN ({','.join('?' * len(ids))}) "
        f"AND event_name IN ('received_message', 'chat_start') ORDER BY id",
        ids,
    ).fetchall()
    lines: list[str] = []
    number = 0
    for name, receiver, state, owner in rows:
        data = _json(state)
        if name == "chat_start":
            if owner in nested:
                lines.append(
                    f"  (nested chat {owner[:_ID]}: {data.get('sender')} -> "
                    f"{data.get('recipient')}; `parley logs PATH {owner[:_ID]}` shows it)"
                )
            continue
        if owner != chat:
            continue
        number += 1
        text = _message_text(data.get("message"))
        lines.append(f"[{number}] {data.get('sender')} -> {receiver}:\n" + _indent(text))
    return "\n".join(lines) if lines else "  (no messages)"


def _message_text(message: Any) -> str:
    if not isinstance(message, dict):
        return str(message) if message not in (None, "") else "(empty)"
    parts = []
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(
            str(p.get("text", f"<{p.get('type')}>")) if isinstance(p, dict) else str(p)
            for p in content
        )
    if content not in (None, ""):
        parts.append(str(content))
    for call in message.get("tool_calls") or ():
        function = call.get("function", {}) if isinstance(call, dict) else {}
        parts.append(f"tool call {function.get('name')}({function.get('arguments')})")
    call = message.get("function_call")
    if isinstance(call, dict):
        parts.append(f"function call {call.get('name')}({call.get('arguments')})")
    return "\n".join(parts) if parts else "(empty)"


def _costs(con: sqlite3.Connection, column: str, label: str, members: list[str], marks: str) -> str:
    rows = con.execute(
        f"SELECT COALESCE({column}, '-'), SUM(NOT is_cached), SUM(is_cached != 0), "
        f"SUM(CASE WHEN is_cached THEN 0 ELSE COALESCE(prompt_tokens, 0) END), "
        f"SUM(CASE WHEN is_cached THEN 0 ELSE COALESCE(completion_tokens, 0) END), "
        f"SUM(CASE WHEN is_cached THEN 0 ELSE cost END) FROM chat_completions "
        f"WHERE chat_id IN ({marks}) GROUP BY 1 ORDER BY 1",
        members,
    ).fetchall()
    if not rows:
        return "  (no model calls)"
    table = [
        [name, str(c), str(k), str(p), str(o), f"{s or 0.0:.6f}"] for name, c, k, p, o, s in rows
    ]
    totals = [sum(int(r[i]) for r in table) for i in (1, 2, 3, 4)]
    cost = sum(float(r[5]) for r in table)
    table.append(["total", *map(str, totals), f"{cost:.6f}"])
    return render_table([label, "calls", "cached", "prompt", "completion", "cost (USD)"], table)


def _timings(con: sqlite3.Connection, chat: str, members: list[str], marks: str) -> str:
    total = con.execute("SELECT duration FROM chats WHERE chat_id = ?", (chat,)).fetchone()[0]

    def seconds(table: str) -> tuple[int, float]:
        count, spent = con.execute(
            f"SELECT COUNT(*), SUM(duration) FROM {table} WHERE chat_id IN ({marks})", members
        ).fetchone()
        return count, spent or 0.0

    rows = [["total", "1", _seconds(total)]]
    for label, table in (
        ("model calls", "chat_completions"),
        ("tool calls", "function_calls"),
        ("code execution", "code_executions"),
    ):
        count, spent = seconds(table)
        rows.append([label, str(count), _seconds(spent)])
    return render_table(["time", "count", "seconds"], rows)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _time(value: Any) -> str:
    return str(value)[:19] if value else "-"


def _json(text: str | None) -> dict[str, Any]:
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines() or [""])
