"""The JSON-lines file logger, and a user's own BaseLogger through start(logger=...)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from parley import runtime_logging
from parley.logger.base_logger import BaseLogger
from parley.testing import FakeLLMServer

from . import chats
from .conftest import SENTINEL


def test_file_logger_writes_json_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeLLMServer(api_key=SENTINEL) as fake:
        session = runtime_logging.start(logger_type="file", config={"filename": "run.log"})
        assert runtime_logging.get_connection() is None
        result = chats.tool_chat(fake)
        runtime_logging.stop()
    path = tmp_path / "autogen_logs" / "run.log"
    text = path.read_text()
    assert SENTINEL not in text
    records = [json.loads(line) for line in text.splitlines()]  # every line parses
    assert records[0]["session_id"] == session
    completions = [r for r in records if "invocation_id" in r]
    assert len(completions) == 2
    assert completions[0]["source_name"] == "assistant"
    assert completions[0]["request"]["messages"][-1]["content"] == "2+3?"
    assert completions[0]["chat_id"] == result.run_id
    agents = {r["agent_name"] for r in records if "agent_type" in r}
    assert {"assistant", "user"} <= agents
    events = [r for r in records if "event_name" in r and "json_state" in r]
    received = [
        json.loads(r["json_state"]) for r in events if r["event_name"] == "received_message"
    ]
    assert [m["sender"] for m in received] == ["user", "assistant", "user", "assistant"]
    uses = [r for r in records if "input_args" in r]
    assert json.loads(uses[0]["input_args"]) == {"a": 2, "b": 3}


def test_file_logger_default_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runtime_logging.start(logger_type="file")
    runtime_logging.stop()
    assert (tmp_path / "autogen_logs" / "runtime.log").is_file()


class Recorder(BaseLogger):
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def start(self) -> str:
        return "my-session"

    def log_chat_completion(
        self,
        invocation_id: Any,
        client_id: int,
        wrapper_id: int,
        source: Any,
        request: dict[str, Any],
        response: Any,
        is_cached: int,
        cost: float,
        start_time: str,
    ) -> None:
        self.calls.append(("completion", (source, request, is_cached, cost, start_time)))

    def log_new_agent(self, agent: Any, init_args: dict[str, Any]) -> None:
        self.calls.append(("agent", agent.name))

    def log_event(self, source: Any, name: str, **kwargs: Any) -> None:
        self.calls.append(("event", (name, kwargs)))

    def log_new_wrapper(self, wrapper: Any, init_args: dict[str, Any]) -> None:
        self.calls.append(("wrapper", init_args))

    def log_new_client(self, client: Any, wrapper: Any, init_args: dict[str, Any]) -> None:
        self.calls.append(("client", init_args))

    def log_function_use(
        self, source: Any, function: Any, args: dict[str, Any], returns: Any
    ) -> None:
        self.calls.append(("function", (source.name, function.__name__, args, returns)))

    def stop(self) -> None:
        self.calls.append(("stop", None))

    def get_connection(self) -> sqlite3.Connection | None:
        return None


def test_a_users_logger_gets_autogens_calls() -> None:
    recorder = Recorder()
    with FakeLLMServer() as fake:
        assert runtime_logging.start(logger=recorder) == "my-session"
        chats.tool_chat(fake)
        runtime_logging.stop()
    kinds = [kind for kind, _ in recorder.calls]
    assert {"agent", "wrapper", "client", "completion", "event", "function"} <= set(kinds)
    assert kinds[-1] == "stop"
    (function,) = [data for kind, data in recorder.calls if kind == "function"]
    assert function == ("user", "add", {"a": 2, "b": 3}, "5")
    completion = next(data for kind, data in recorder.calls if kind == "completion")
    assert completion[0].name == "assistant"
    assert completion[2] == 0
    assert completion[3] > 0
    assert "api_key" not in json.dumps(completion[1], default=str)
    names = [data[0] for kind, data in recorder.calls if kind == "event"]
    assert names[0] == "chat_start"
    assert names[-1] == "chat_end"
    assert "received_message" in names
    assert "reply_func_executed" in names
    end = next(
        data[1] for kind, data in recorder.calls if kind == "event" and data[0] == "chat_end"
    )
    assert end["termination_reason"] == "is_termination_msg"
    assert end["total_cost"] > 0


def test_a_logger_whose_start_fails(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(Recorder):
        def start(self) -> str:
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        runtime_logging.start(logger=Broken())
    assert not runtime_logging.logging_enabled()
    assert "Failed to start logging: disk full" in caplog.text


def test_a_logger_that_raises_never_breaks_a_chat(caplog: pytest.LogCaptureFixture) -> None:
    class Raising(Recorder):
        def log_event(self, source: Any, name: str, **kwargs: Any) -> None:
            raise RuntimeError("logger bug")

    with FakeLLMServer() as fake:
        runtime_logging.start(logger=Raising())
        result = chats.tool_chat(fake)
    assert len(result.chat_history) == 4
    assert result.termination_reason == "is_termination_msg"
    assert "logger bug" in caplog.text
