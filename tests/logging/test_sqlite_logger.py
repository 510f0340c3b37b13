"""The SQLite log of real chats on the fake server, read as AutoGen users read it."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path

from parley import OpenAIWrapper, runtime_logging
from parley.testing import FakeLLMServer

from . import chats
from .conftest import SENTINEL, db_bytes, rows

AUTOGEN_COLUMNS = {
    "chat_completions": [
        "id",
        "invocation_id",
        "client_id",
        "wrapper_id",
        "session_id",
        "source_name",
        "request",
        "response",
        "is_cached",
        "cost",
        "start_time",
        "end_time",
    ],
    "agents": [
        "id",
        "agent_id",
        "wrapper_id",
        "session_id",
        "name",
        "class",
        "init_args",
        "timestamp",
    ],
    "oai_wrappers": ["id", "wrapper_id", "session_id", "init_args", "timestamp"],
    "oai_clients": [
        "id",
        "client_id",
        "wrapper_id",
        "session_id",
        "class",
        "init_args",
        "timestamp",
    ],
    "version": ["id", "version_number"],
    "events": [
        "event_name",
        "source_id",
        "source_name",
        "agent_module",
        "agent_class_name",
        "id",
        "json_state",
        "timestamp",
    ],
    "function_calls": [
        "source_id",
        "source_name",
        "function_name",
        "args",
        "returns",
        "timestamp",
    ],
}


def test_every_kind_of_record(tmp_path: Path, dbname: str) -> None:
    with FakeLLMServer(api_key=SENTINEL) as fake:
        session = runtime_logging.start(config={"dbname": dbname})
        assert runtime_logging.logging_enabled()
        tool = chats.tool_chat(fake)
        code = chats.code_chat(fake, tmp_path / "work")
        group = chats.group_chat(fake)
        nested = chats.nested_chat(fake)
        runtime_logging.stop()
    assert not runtime_logging.logging_enabled()

    con = sqlite3.connect(dbname)
    # AutoGen's columns come first, in AutoGen's order.
    for table, columns in AUTOGEN_COLUMNS.items():
        names = [d[0] for d in con.execute(f"SELECT * FROM {table}").description]
        assert names[: len(columns)] == columns, table
    assert rows(con, "version") == [{"id": 1, "version_number": 1}]

    agents = {r["name"]: r for r in rows(con, "agents")}
    assert {"assistant", "user", "coder", "runner", "alice", "bob", "host", "reviewer"} <= set(
        agents
    )
    assert agents["assistant"]["class"] == "AssistantAgent"
    assert {r["session_id"] for r in rows(con, "agents")} == {session}
    init_args = json.loads(agents["assistant"]["init_args"])
    assert init_args["name"] == "assistant"
    assert init_args["llm_config"]["config_list"][0]["model"] == "fake-model"
    assert "api_key" not in init_args["llm_config"]["config_list"][0]
    assert rows(con, "oai_wrappers")
    assert rows(con, "oai_clients")
    assert {r["class"] for r in rows(con, "oai_clients")} == {
        "OpenAI"
    }  # AutoGen logged the SDK client's class

    completions = rows(con, "chat_completions")
    assert len(completions) == 2 + 2 + 2 + 1
    first = completions[0]
    assert first["source_name"] == "assistant"
    assert first["is_cached"] == 0
    assert json.loads(first["request"])["messages"][-1]["content"] == "2+3?"
    response = json.loads(first["response"])
    assert response["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "add"
    assert first["cost"] > 0
    assert first["duration"] >= 0
    assert first["model"] == "fake-model"
    assert first["start_time"] <= first["end_time"]

    calls = rows(con, "function_calls")
    assert [(c["source_name"], c["function_name"]) for c in calls] == [("user", "add")]
    assert json.loads(calls[0]["args"]) == {"a": 2, "b": 3}
    assert json.loads(calls[0]["returns"]) == "5"
    assert calls[0]["chat_id"] == tool.run_id

    executions = rows(con, "code_executions")
    assert len(executions) == 1
    assert executions[0]["exit_code"] == 0
    assert "42" in executions[0]["output"]
    assert executions[0]["source_name"] == "runner"
    assert executions[0]["chat_id"] == code.run_id

    names = {r["event_name"] for r in rows(con, "events")}
    assert {
        "received_message",
        "reply_func_executed",
        "code_execution",
        "chat_start",
        "chat_end",
    } <= names
    received = rows(
        con, "events", "WHERE event_name = 'received_message' AND chat_id = ?", tool.run_id
    )
    assert [json.loads(r["json_state"])["sender"] for r in received] == ["user", "assistant"] * 2
    assert json.loads(received[0]["json_state"])["message"] == "2+3?"
    assert received[0]["agent_class_name"] == "AssistantAgent"
    replies = rows(con, "events", "WHERE event_name = 'reply_func_executed'")
    state = json.loads(replies[0]["json_state"])
    assert set(state) == {"reply_func_module", "reply_func_name", "final", "reply"}

    chat_rows = {r["chat_id"]: r for r in rows(con, "chats")}
    results = (tool, code, group, nested)
    assert {r.run_id for r in results} <= set(chat_rows)
    for result in results:  # the ledger and the log agree
        row = chat_rows[result.run_id]
        assert json.loads(row["usage"]) == result.cost
        assert row["cost"] == result.usage.cost
        assert row["termination_reason"] == result.termination_reason
    children = [r for r in chat_rows.values() if r["parent_chat_id"] == nested.run_id]
    assert [(c["sender"], c["recipient"]) for c in children] == [("critic", "reviewer")]
    assert chat_rows[nested.run_id]["cost"] > 0  # its nested chat's call counts
    group_senders = {
        json.loads(r["json_state"])["sender"]
        for r in rows(
            con, "events", "WHERE event_name = 'received_message' AND chat_id = ?", group.run_id
        )
    }
    assert {"alice", "bob", "host"} <= group_senders
    con.close()
    assert SENTINEL.encode() not in db_bytes(dbname)
    assert b"127.0.0.1" not in db_bytes(dbname)  # base_url is left out, as AutoGen does


def test_create_without_an_agent_is_logged_with_the_wrapper(dbname: str) -> None:
    with FakeLLMServer() as fake:
        runtime_logging.start(config={"dbname": dbname})
        client = OpenAIWrapper(config_list=fake.config_list(), cache_seed=None)
        fake.add_reply("hello")
        client.create(messages=[{"role": "user", "content": "hi"}])
        con = runtime_logging.get_connection()
        assert con is not None
        (row,) = rows(con, "chat_completions")
        assert row["source_name"] == "OpenAIWrapper"
        assert row["chat_id"] is None


def test_get_connection_while_running_then_start_again(dbname: str, tmp_path: Path) -> None:
    with FakeLLMServer() as fake:
        first = runtime_logging.start(config={"dbname": dbname})
        con = runtime_logging.get_connection()
        assert con is not None
        assert runtime_logging.get_connection() is con
        chats.tool_chat(fake)
        # the records queued so far are visible to the next query, from any thread
        assert len(rows(con, "chat_completions")) == 2
        runtime_logging.stop()
        assert runtime_logging.get_connection() is None

        second = runtime_logging.start(config={"dbname": dbname})
        assert second != first
        chats.tool_chat(fake)
        con2 = runtime_logging.get_connection()
        assert con2 is not None
        sessions = [r["session_id"] for r in rows(con2, "chat_completions")]
        assert sessions == [first, first, second, second]
        # a second start() stops the running logger first
        other = str(tmp_path / "other.db")
        runtime_logging.start(config={"dbname": other})
        assert runtime_logging.get_connection() is not con2


def test_an_autogen_database_gets_parleys_columns(dbname: str) -> None:
    con = sqlite3.connect(dbname)
    con.execute(
        "CREATE TABLE chat_completions(id INTEGER PRIMARY KEY, invocation_id TEXT, client_id "
        "INTEGER, wrapper_id INTEGER, session_id TEXT, source_name TEXT, request TEXT, response "
        "TEXT, is_cached INEGER, cost REAL, start_time DATETIME, end_time DATETIME)"
    )
    con.execute("INSERT INTO chat_completions (session_id, cost) VALUES ('old', 0.5)")
    con.commit()
    con.close()
    with FakeLLMServer() as fake:
        runtime_logging.start(config={"dbname": dbname})
        chats.tool_chat(fake)
        runtime_logging.stop()
    con = sqlite3.connect(dbname)
    got = rows(con, "chat_completions")
    assert len(got) == 3
    assert got[0]["session_id"] == "old"
    assert got[1]["chat_id"] is not None
    con.close()


def test_a_database_that_cannot_be_opened_fails_start(tmp_path: Path) -> None:
    import pytest

    with pytest.raises(sqlite3.Error):
        runtime_logging.start(config={"dbname": str(tmp_path / "missing" / "logs.db")})
    assert not runtime_logging.logging_enabled()


def test_credentials_never_written_wherever_they_hide(dbname: str) -> None:
    import parley
    from parley import AssistantAgent, UserProxyAgent

    header_secret = "hdr-SENTINEL-0123456789"
    # A key not seen before (random per run) in agents made before logging starts: the log
    # learns it from the model client that uses it.
    key = f"sk-late-{uuid.uuid4().hex}"
    with FakeLLMServer(api_key=key) as fake:
        config = fake.config_list(default_headers={"X-Custom-Auth-Token": header_secret})
        assistant = AssistantAgent("assistant", llm_config={"config_list": config})
        user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
        runtime_logging.start(config={"dbname": dbname})

        def leak() -> str:
            return f"the key is {key}"  # a tool that prints the key

        parley.register_function(leak, caller=assistant, executor=user, description="Leak.")
        fake.add_reply(tool_calls=[{"name": "leak", "arguments": {}}])
        fake.add_reply("TERMINATE")
        user.initiate_chat(assistant, message="go", silent=True)
        runtime_logging.stop()
    data = db_bytes(dbname)
    assert key.encode() not in data
    assert header_secret.encode() not in data
    con = sqlite3.connect(dbname)
    (returns,) = con.execute("SELECT returns FROM function_calls").fetchone()
    assert json.loads(returns) == "the key is <redacted>"
    con.close()


def test_a_key_of_a_client_made_before_logging_is_scrubbed(dbname: str) -> None:
    key = f"sk-early-{uuid.uuid4().hex}"  # never seen by the log before the call
    with FakeLLMServer(api_key=key) as fake:
        client = OpenAIWrapper(config_list=fake.config_list(), cache_seed=None)
        runtime_logging.start(config={"dbname": dbname})
        fake.add_reply(f"your key is {key}")  # a model repeating the key it was sent
        client.create(messages=[{"role": "user", "content": "what is my key?"}])
        runtime_logging.stop()
    assert key.encode() not in db_bytes(dbname)
    con = sqlite3.connect(dbname)
    (response,) = con.execute("SELECT response FROM chat_completions").fetchone()
    assert json.loads(response)["choices"][0]["message"]["content"] == "your key is <redacted>"
    con.close()


def test_each_request_is_logged_as_it_was_sent(dbname: str) -> None:
    # A conversation's requests share their first messages, and the logger serializes those
    # once; a message changed in place between two requests must still be logged as sent.
    with FakeLLMServer() as fake:
        runtime_logging.start(config={"dbname": dbname})
        client = OpenAIWrapper(config_list=fake.config_list(), cache_seed=None)
        system = {"role": "system", "content": "be brief"}
        first = {"role": "user", "content": "one"}
        messages = [system, first]
        for _ in range(4):
            fake.add_reply("ok")
        client.create(messages=list(messages))
        messages.append({"role": "assistant", "content": "ok"})
        client.create(messages=list(messages))  # the same dicts, one more message
        first["content"] = "ONE, changed in place"
        client.create(messages=list(messages))
        client.create(messages=[system])  # shorter than before
        con = runtime_logging.get_connection()
        assert con is not None
        sent = [json.loads(r["request"])["messages"] for r in rows(con, "chat_completions")]
        assert sent == [r["messages"] for r in fake.requests]
    assert [[m["content"] for m in request] for request in sent] == [
        ["be brief", "one"],
        ["be brief", "one", "ok"],
        ["be brief", "ONE, changed in place", "ok"],
        ["be brief"],
    ]


def test_a_conversation_stores_each_message_once(dbname: str) -> None:
    # A request repeats its conversation's history; the log keeps each message once and
    # chat_completions still reads every request whole.
    with FakeLLMServer() as fake:
        for _ in range(30):
            fake.add_reply("ok")
        runtime_logging.start(config={"dbname": dbname})
        client = OpenAIWrapper(config_list=fake.config_list(), cache_seed=None)
        messages: list[dict[str, str]] = [{"role": "system", "content": "be brief"}]
        for i in range(30):
            messages.append({"role": "user", "content": f"question {i}"})
            client.create(messages=list(messages))
            messages.append({"role": "assistant", "content": "ok"})
        con = runtime_logging.get_connection()
        assert con is not None
        sent = [json.loads(r["request"]) for r in rows(con, "chat_completions")]
        assert sent == fake.requests
        (stored,) = con.execute("SELECT COUNT(*) FROM request_messages").fetchone()
        runtime_logging.stop()
    assert stored == len(messages) - 1  # the last reply was never sent back


def test_code_that_inserts_into_chat_completions_itself_still_works(dbname: str) -> None:
    # AutoGen's logger (or a user's script) writes AutoGen's table directly.
    with FakeLLMServer() as fake:
        runtime_logging.start(config={"dbname": dbname})
        chats.tool_chat(fake)
        runtime_logging.stop()
    con = sqlite3.connect(dbname)
    con.execute(
        "INSERT INTO chat_completions (invocation_id, session_id, request, response, cost) "
        "VALUES ('x', 'theirs', '{\"messages\": []}', '{}', 0.25)"
    )
    con.commit()
    got = rows(con, "chat_completions")
    assert got[-1]["session_id"] == "theirs"
    assert json.loads(got[-1]["request"]) == {"messages": []}
    assert got[-1]["cost"] == 0.25
    con.close()
