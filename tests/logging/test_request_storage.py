"""Requests stored once per message still read back exactly as they were logged, whatever a
program does to its message lists between calls (hypothesis drives the changes)."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.logger import SqliteLogger

# What a program does between two calls: append a message, change one in place, drop the
# last ones, or start another conversation (a new system message).
_steps = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.text(max_size=12)),
        st.tuples(st.just("change"), st.integers(min_value=0, max_value=50)),
        st.tuples(st.just("drop"), st.integers(min_value=1, max_value=3)),
        st.tuples(st.just("restart"), st.text(max_size=8)),
    ),
    min_size=1,
    max_size=25,
)


def _apply(step: tuple[str, Any], conversation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    action, value = step
    if action == "append":
        conversation.append({"role": "user", "content": value, "name": "u"})
    elif action == "change" and len(conversation) > 1:
        conversation[value % len(conversation)]["content"] += "!"
    elif action == "drop":
        del conversation[max(1, len(conversation) - value) :]
    elif action == "restart":
        conversation = [{"role": "system", "content": value}]
    return conversation


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=_steps)
def test_logged_requests_read_back_as_sent(tmp_path: Path, steps: list[tuple[str, Any]]) -> None:
    dbname = str(tmp_path / f"{uuid.uuid4().hex}.db")
    logger = SqliteLogger({"dbname": dbname})
    logger.start()
    conversation: list[dict[str, Any]] = [{"role": "system", "content": "s"}]
    sent = []
    try:
        for step in steps:
            conversation = _apply(step, conversation)
            request = {"model": "m", "temperature": 0, "messages": list(conversation)}
            sent.append(json.loads(json.dumps(request)))  # as it was at the call
            logger.log_chat_completion(
                uuid.uuid4(), 1, 2, "agent", request, "reply", 0, 0.0, "2026-01-01 00:00:00.000000"
            )
    finally:
        logger.stop()
    con = sqlite3.connect(dbname)
    try:
        logged = [json.loads(r) for (r,) in con.execute("SELECT request FROM chat_completions")]
    finally:
        con.close()
    assert logged == sent
