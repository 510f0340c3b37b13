"""Runtime logging read the way AutoGen 0.2's own code and tests read it: an in-memory database
queried through ``get_connection()`` with a cursor taken before the chat, records readable the
moment a ``log_*`` call returns, the file logger's JSON lines at ``config["filename"]``, and
``to_dict`` walking nested data."""

from __future__ import annotations

import json
import logging
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest

import parley
from parley import runtime_logging
from parley.logger.file_logger import FileLogger
from parley.logger.logger_utils import get_current_ts, to_dict
from parley.logger.sqlite_logger import SqliteLogger
from parley.testing import FakeLLMServer

from .conftest import SENTINEL

TEACHER = "You teach linear algebra. Keep it short."
STUDENT = "You are a student who never quite gets it."

AUTOGEN_TABLES = {
    "chat_completions": (
        "id invocation_id client_id wrapper_id session_id source_name request response "
        "is_cached cost start_time end_time"
    ),
    "agents": "id agent_id wrapper_id session_id name class init_args timestamp",
    "oai_wrappers": "id wrapper_id session_id init_args timestamp",
    "oai_clients": "id client_id wrapper_id session_id class init_args timestamp",
    "version": "id version_number",
    "events": (
        "event_name source_id source_name agent_module agent_class_name id json_state timestamp"
    ),
    "function_calls": "source_id source_name function_name args returns timestamp",
}


def _memory_connection() -> sqlite3.Connection:
    runtime_logging.start(config={"dbname": ":memory:"})
    con = runtime_logging.get_connection()
    assert con is not None
    con.row_factory = sqlite3.Row
    return con


def _teacher_and_student(fake: FakeLLMServer) -> tuple[Any, Any]:
    llm = fake.llm_config(price=[1.0, 2.0], cache_seed=None)
    teacher = parley.AssistantAgent(
        "teacher", system_message=TEACHER, llm_config=llm, max_consecutive_auto_reply=2
    )
    student = parley.AssistantAgent(
        "student", system_message=STUDENT, llm_config=llm, max_consecutive_auto_reply=1
    )
    return teacher, student


# -- the SQLite logger, through runtime_logging -----------------------------------------------


def test_memory_database_holds_autogens_tables_for_get_connection() -> None:
    con = _memory_connection()
    for table, columns in AUTOGEN_TABLES.items():
        names = [row[1] for row in con.execute(f"PRAGMA table_info({table})")]
        assert names[: len(columns.split())] == columns.split(), table
    assert [tuple(r) for r in con.execute("SELECT id, version_number FROM version")] == [(1, 1)]


def test_cursor_taken_before_a_chat_reads_its_records_in_memory() -> None:
    con = _memory_connection()
    cur = con.cursor()  # AutoGen's tests take it before the chat
    with FakeLLMServer(api_key=SENTINEL) as fake:
        teacher, student = _teacher_and_student(fake)
        for text in ("Eigenvalues scale.", "I still do not get it.", "Singular values stretch."):
            fake.add_reply(text)
        student.initiate_chat(teacher, message="Eigen vs singular values?", silent=True)

        cur.execute(
            "SELECT id, invocation_id, client_id, wrapper_id, session_id, request, response,"
            " is_cached, cost, start_time, end_time FROM chat_completions"
        )
        completions = cur.fetchall()
    assert len(completions) == 3
    assert {row["session_id"] for row in completions} == {completions[0]["session_id"]}
    firsts = [json.loads(row["request"])["messages"][0] for row in completions]
    assert [m["content"] for m in firsts] == [TEACHER, STUDENT, TEACHER]
    assert {m["role"] for m in firsts} == {"system"}
    for row in completions:
        assert str(uuid.UUID(row["invocation_id"], version=4)) == row["invocation_id"]
        assert row["client_id"]
        assert row["wrapper_id"]
        assert json.loads(row["response"])["choices"]
        assert row["cost"] > 0
        assert row["start_time"] <= row["end_time"]

    cur.execute("SELECT name, class, wrapper_id, init_args FROM agents ORDER BY id")
    agents = cur.fetchall()
    assert [(a["name"], a["class"]) for a in agents] == [
        ("teacher", "AssistantAgent"),
        ("student", "AssistantAgent"),
    ]
    for agent in agents:
        assert agent["wrapper_id"]
        assert json.loads(agent["init_args"])["name"] == agent["name"]
        assert "api_key" not in agent["init_args"]
        assert SENTINEL not in agent["init_args"]

    cur.execute("SELECT class, init_args FROM oai_clients")
    clients = cur.fetchall()
    assert len(clients) == 2  # one config entry, two agents
    assert {c["class"] for c in clients} == {"OpenAI"}  # AutoGen logged the SDK client's class
    assert all(SENTINEL not in c["init_args"] for c in clients)

    cur.execute("SELECT init_args FROM oai_wrappers")
    wrappers = [json.loads(w["init_args"]) for w in cur.fetchall()]
    assert len(wrappers) == 2
    assert all(w["config_list"] and "api_key" not in w["config_list"][0] for w in wrappers)


def test_group_chat_records_in_memory() -> None:
    cur = _memory_connection().cursor()
    with FakeLLMServer(api_key=SENTINEL) as fake:
        teacher, student = _teacher_and_student(fake)
        group = parley.GroupChat(
            agents=[teacher, student],
            messages=[],
            max_round=3,
            speaker_selection_method="round_robin",
        )
        manager = parley.GroupChatManager(
            groupchat=group, llm_config=fake.llm_config(cache_seed=None)
        )
        fake.add_reply("Eigenvalues scale.")
        fake.add_reply("Still lost.")
        student.initiate_chat(manager, message="Eigen vs singular values?", silent=True)

        assert len(cur.execute("SELECT id FROM chat_completions").fetchall()) == 2
    names = [r["name"] for r in cur.execute("SELECT name FROM agents ORDER BY id")]
    assert names == ["teacher", "student", "chat_manager"]
    manager_row = cur.execute("SELECT class FROM agents WHERE name = 'chat_manager'").fetchall()
    assert [r["class"] for r in manager_row] == ["GroupChatManager"]
    assert len(cur.execute("SELECT id FROM oai_clients").fetchall()) == 3
    assert len(cur.execute("SELECT id FROM oai_wrappers").fetchall()) == 3
    assert [tuple(r) for r in cur.execute("SELECT id, version_number FROM version")] == [(1, 1)]


def test_two_memory_loggers_do_not_share_a_database() -> None:
    first, second = SqliteLogger({"dbname": ":memory:"}), SqliteLogger({"dbname": ":memory:"})
    first.start()
    second.start()
    try:
        first.log_event("alone", "only_in_first")
        for logger, expected in ((first, 1), (second, 0)):
            con = logger.get_connection()
            assert con is not None
            assert con.execute("SELECT COUNT(*) FROM events").fetchone()[0] == expected
    finally:
        first.stop()
        second.stop()
    assert first.get_connection() is None


SAMPLE_REQUEST = {
    "messages": [
        {"content": STUDENT, "role": "system"},
        {"content": "Eigen vs singular values?", "role": "user"},
    ],
    "model": "gpt-4",
}
SAMPLE_RESPONSE = {
    "id": "chatcmpl-1",
    "choices": [
        {
            "finish_reason": "stop",
            "index": 0,
            "logprobs": None,
            "message": {"content": "Matrices?", "role": "assistant", "tool_calls": None},
        }
    ],
    "created": 1705993480,
    "model": "gpt-4",
    "object": "chat.completion",
    "usage": {"completion_tokens": 2, "prompt_tokens": 20, "total_tokens": 22},
}


@pytest.mark.parametrize(
    ("response", "logged"),
    [
        (SAMPLE_RESPONSE, SAMPLE_RESPONSE),
        (None, {"response": None}),
        ("error in response", {"response": "error in response"}),
    ],
)
def test_hook_call_is_readable_when_it_returns(response: Any, logged: Any) -> None:
    cur = _memory_connection().cursor()
    invocation = str(uuid.uuid4())
    start = get_current_ts()
    runtime_logging.log_chat_completion(
        invocation_id=invocation,  # type: ignore[arg-type]  # AutoGen's tests pass a str
        client_id=140609438577184,
        wrapper_id=140610167717744,
        agent="student",
        request=SAMPLE_REQUEST,
        response=response,
        is_cached=0,
        cost=0.347,
        start_time=start,
    )
    rows = list(
        cur.execute(
            "SELECT invocation_id, client_id, wrapper_id, source_name, request, response,"
            " is_cached, cost, start_time FROM chat_completions"
        )
    )
    assert len(rows) == 1
    row = rows[0]
    assert (row["invocation_id"], row["client_id"], row["wrapper_id"]) == (
        invocation,
        140609438577184,
        140610167717744,
    )
    assert row["source_name"] == "student"
    assert json.loads(row["request"]) == SAMPLE_REQUEST
    assert json.loads(row["response"]) == logged
    assert (row["is_cached"], row["cost"], row["start_time"]) == (0, 0.347, start)


def test_hook_calls_write_autogens_rows_at_once(dbname: str) -> None:
    # Made before logging starts: the rows below are the hooks' alone.
    wrapper = parley.OpenAIWrapper(config_list=[{"model": "gpt-4", "api_key": SENTINEL}])
    runtime_logging.start(config={"dbname": dbname})
    agent = parley.AssistantAgent("helper", llm_config=False)
    init_args = {"foo": "bar", "baz": {"other_key": "other_val"}, "a": None}
    runtime_logging.log_new_agent(agent, init_args)

    wrapper_args = {
        "llm_config": {"config_list": [{"model": "gpt-4", "api_key": SENTINEL, "base_url": "u"}]},
        "base_config": {},
    }
    runtime_logging.log_new_wrapper(wrapper, wrapper_args)

    client_args = {"api_key": SENTINEL, "api_version": "2024-02-15-preview"}
    runtime_logging.log_new_client(object(), wrapper, client_args)

    def lookup(city: str) -> str:
        return city.upper()

    runtime_logging.log_function_use(
        agent=agent, function=lookup, args={"city": "oslo"}, returns="OSLO"
    )
    runtime_logging.log_event(agent, "custom_event", detail={"nested": [1, 2]})

    # Another connection, opened after the calls returned, sees every row: nothing waits for
    # a batch (or for stop()).
    con = sqlite3.connect(dbname)
    con.row_factory = sqlite3.Row
    row = con.execute("SELECT name, class, init_args FROM agents WHERE name = 'helper'").fetchone()
    assert (row["class"], row["init_args"]) == ("AssistantAgent", json.dumps(init_args))

    (saved,) = [json.loads(r[0]) for r in con.execute("SELECT init_args FROM oai_wrappers")]
    assert saved["llm_config"]["config_list"] == [{"model": "gpt-4"}]
    assert saved["base_config"] == {}

    client = con.execute("SELECT class, init_args FROM oai_clients").fetchall()[-1]
    assert client["class"] == "object"
    assert json.loads(client["init_args"]) == {"api_version": "2024-02-15-preview"}

    call = con.execute("SELECT source_name, function_name, args, returns FROM function_calls")
    assert [tuple(r) for r in call] == [
        ("helper", "lookup", json.dumps({"city": "oslo"}), json.dumps("OSLO"))
    ]
    event = con.execute(
        "SELECT source_name, agent_module, agent_class_name, json_state FROM events"
        " WHERE event_name = 'custom_event'"
    ).fetchone()
    assert tuple(event) == (
        "helper",
        type(agent).__module__,
        "AssistantAgent",
        json.dumps({"detail": {"nested": [1, 2]}}),
    )
    con.close()
    runtime_logging.stop()
    assert SENTINEL.encode() not in Path(dbname).read_bytes()


def test_a_bad_record_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    cur = _memory_connection().cursor()
    with caplog.at_level(logging.ERROR):
        runtime_logging.log_chat_completion(
            uuid.uuid4(),
            1,
            2,
            "student",
            SAMPLE_REQUEST,
            None,
            {"foo": "bar"},
            0.1,
            "t",  # type: ignore[arg-type]
        )
    assert any(
        str(r.msg).startswith("[SqliteLogger] log_chat_completion error:") for r in caplog.records
    )
    cur.execute("SELECT COUNT(*) FROM chat_completions")
    assert cur.fetchone()[0] == 0


def test_log_calls_before_start_are_dropped(dbname: str) -> None:
    logger = SqliteLogger({"dbname": dbname})
    logger.log_event("early", "before_start")  # returns at once: nothing to wait for
    logger.start()
    try:
        con = logger.get_connection()
        assert con is not None
        assert con.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
    finally:
        logger.stop()


# -- the file logger ----------------------------------------------------------------------


@pytest.fixture
def file_logger(tmp_path: Path) -> Any:
    logger = FileLogger({"filename": str(tmp_path / "logs" / "test_log.log")})
    yield logger
    logger.stop()


def _lines(logger: FileLogger) -> list[dict[str, Any]]:
    with open(logger.log_file, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_file_logger_writes_to_the_configured_path(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    logger = FileLogger({"filename": str(tmp_path / "logs" / "run.jsonl")})
    try:
        session = logger.start()
        assert len(session) == 36
        assert logger.log_file == str(tmp_path / "logs" / "run.jsonl")
        assert _lines(logger)[0]["session_id"] == session
    finally:
        logger.stop()


def test_file_logger_records_are_in_the_file_when_the_call_returns(
    tmp_path: Path, file_logger: FileLogger
) -> None:
    (tmp_path / "logs").mkdir()
    invocation = uuid.uuid4()
    start = "2024-05-06 15:20:21.263231"
    # No start(): AutoGen's file logger wrote from its constructor on.
    file_logger.log_chat_completion(
        invocation, 123456789, 987654321, "tester", SAMPLE_REQUEST, "Test response", 0, 0.5, start
    )
    (line,) = _lines(file_logger)
    assert line["invocation_id"] == str(invocation)
    assert (line["client_id"], line["wrapper_id"]) == (123456789, 987654321)
    assert line["response"] == "Test response"
    assert (line["is_cached"], line["cost"], line["start_time"]) == (0, 0.5, start)
    assert line["source_name"] == "tester"
    assert isinstance(line["thread_id"], int)

    agent = parley.UserProxyAgent("user_proxy", code_execution_config=False)
    file_logger.log_new_agent(agent)
    assert _lines(file_logger)[-1]["agent_name"] == "user_proxy"

    file_logger.log_event(agent, "TestEvent", key="value")
    event = _lines(file_logger)[-1]
    assert (event["source_name"], event["event_name"]) == ("user_proxy", "TestEvent")
    assert event["json_state"] == json.dumps({"key": "value"})
    assert isinstance(event["thread_id"], int)

    class Holder:
        pass

    wrapper, client = Holder(), Holder()
    file_logger.log_new_wrapper(wrapper, {"foo": "bar"})
    record = _lines(file_logger)[-1]
    assert (record["wrapper_id"], record["json_state"]) == (id(wrapper), json.dumps({"foo": "bar"}))

    file_logger.log_new_client(client, wrapper, {"foo": "bar", "api_key": SENTINEL})
    record = _lines(file_logger)[-1]
    assert (record["client_id"], record["wrapper_id"]) == (id(client), id(wrapper))
    assert record["json_state"] == json.dumps({"foo": "bar"})
    assert SENTINEL not in Path(file_logger.log_file).read_text()


# -- to_dict ------------------------------------------------------------------------------


def test_to_dict_walks_nested_data_excluding_keys_at_every_level() -> None:
    alice = parley.ConversableAgent("alice", llm_config=False, human_input_mode="NEVER")

    class Leaf:
        def __init__(self) -> None:
            self.ratio = 1.5
            self.label = "a leaf"
            self.table = {"some_key": [7, 8, 9]}
            self.nothing = None
            self.combine = lambda x, y: x + y
            self.drop_me = "left out"

    class Tree:
        def __init__(self) -> None:
            self.leaves = [Leaf()]
            self.options = {"key_1": None, "key_2": [{"inner": ("v1", "v2")}]}
            self.members = [alice]
            self.lead = alice
            self.self = "kept: only the given keys are left out"

    out = to_dict(Tree(), exclude=("key_1", "drop_me"), no_recursive=(parley.Agent,))
    assert out["leaves"] == [
        {
            "ratio": 1.5,
            "label": "a leaf",
            "table": {"some_key": [7, 8, 9]},
            "nothing": None,
            "combine": "self.combine = lambda x, y: x + y",
        }
    ]
    assert out["options"] == {"key_2": [{"inner": ["v1", "v2"]}]}
    assert out["members"] == [str(alice)]
    assert out["lead"] == str(alice)
    assert out["self"] == "kept: only the given keys are left out"
    # A class, not a tuple, as no_recursive (AutoGen's tests pass one).
    assert to_dict({"who": alice}, no_recursive=parley.Agent) == {"who": str(alice)}


def test_to_dict_keeps_deep_nesting() -> None:
    data: dict[str, Any] = {"bottom": True}
    for _ in range(40):
        data = {"down": [data]}
    out = to_dict(data)
    assert out == json.loads(json.dumps(data))


def test_wrappers_are_logged_with_autogens_init_args(dbname: str) -> None:
    runtime_logging.start(config={"dbname": dbname})
    parley.OpenAIWrapper(
        config_list=[{"model": "gpt-4", "api_key": SENTINEL}], temperature=0.5, cache_seed=None
    )
    con = runtime_logging.get_connection()
    assert con is not None
    (row,) = con.execute("SELECT init_args FROM oai_wrappers").fetchall()
    # The constructor's arguments by name, as AutoGen logged its locals().
    assert json.loads(row[0]) == {
        "config_list": [{"model": "gpt-4"}],
        "base_config": {"temperature": 0.5, "cache_seed": None},
    }


def test_to_dict_drops_credentials_even_under_ordinary_key_names() -> None:
    out = to_dict(
        {
            "cache_key": "abc",
            "openai_key": "sk-proj-abcdefghijklmnop",
            "key": "Bearer abcdefghijklmnop",
            "api_key": "anything",
            "session_key": "s3cr3t-value",
        }
    )
    assert out == {"cache_key": "abc"}
