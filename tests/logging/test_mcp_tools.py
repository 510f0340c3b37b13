"""The runtime log records a tool call of a real MCP server (the demo server over stdio) as it
records a Python function's: the same rows, and no secret of the server's or the model's."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from parley import AssistantAgent, UserProxyAgent, runtime_logging
from parley.testing import FakeLLMServer

from ..mcp.twins import KINDS, SECRET, note_tools
from .chats import llm
from .conftest import SENTINEL, db_bytes, rows


async def _logged_chat(kind: str, tmp: Path) -> tuple[Any, list[dict[str, Any]], bytes]:
    dbname = str(tmp / f"{kind}.db")
    with FakeLLMServer(api_key=SENTINEL) as fake:
        runtime_logging.start(config={"dbname": dbname})
        assistant = AssistantAgent("assistant", llm_config=llm(fake))
        user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
        async with note_tools(kind, assistant, user, tmp / kind) as calls:
            fake.add_reply(
                tool_calls=[
                    {"name": "append_note", "arguments": {"text": "hi"}, "id": "call_1"},
                    {"name": "explode", "arguments": {"reason": "boom"}, "id": "call_2"},
                ]
            )
            fake.add_reply("TERMINATE")
            result = await user.a_initiate_chat(assistant, message="note it", silent=True)
        runtime_logging.stop()
    assert calls() == 1
    con = sqlite3.connect(dbname)
    try:
        # Async tools of one message run concurrently: the rows come in the order they ended.
        logged = sorted(rows(con, "function_calls"), key=lambda r: r["function_name"])
    finally:
        con.close()
    return result, logged, db_bytes(dbname)


@pytest.mark.parametrize("kind", KINDS)
async def test_a_tool_call_is_logged_as_a_function_call(kind: str, tmp_path: Path) -> None:
    result, logged, data = await _logged_chat(kind, tmp_path)
    assert [(r["source_name"], r["function_name"]) for r in logged] == [
        ("user", "append_note"),
        ("user", "explode"),
    ]
    assert [json.loads(r["args"]) for r in logged] == [{"text": "hi"}, {"reason": "boom"}]
    noted, exploded = (json.loads(r["returns"]) for r in logged)
    assert noted == "noted hi"
    assert exploded.startswith("Error: ")
    assert "exploded: boom" in exploded
    assert {r["chat_id"] for r in logged} == {result.run_id}
    assert SECRET.encode() not in data
    assert SENTINEL.encode() not in data


async def test_an_mcp_call_is_logged_like_a_python_one(tmp_path: Path) -> None:
    def shape(logged: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [(r["source_name"], r["function_name"], r["args"]) for r in logged]

    _, python, _ = await _logged_chat("python", tmp_path)
    _, mcp, _ = await _logged_chat("mcp", tmp_path)
    assert shape(mcp) == shape(python)
    assert mcp[0]["returns"] == python[0]["returns"]
