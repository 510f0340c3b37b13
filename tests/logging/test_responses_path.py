"""Model calls over OpenAI's Responses API (``api_type: "responses"``) logged as chat calls
are: the request without its key, the response with its cached and reasoning token counts,
the cost of a reasoning model's cached input."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from parley import runtime_logging
from parley.testing import FakeLLMServer
from tests._responses_chat import COST, MODEL, tool_chat

from .conftest import SENTINEL, db_bytes, rows


def test_the_sqlite_log_of_a_responses_chat(dbname: str) -> None:
    with FakeLLMServer(api_key=SENTINEL) as fake:
        runtime_logging.start(config={"dbname": dbname})
        result = tool_chat(fake)
        runtime_logging.stop()
        assert {r.path for r in fake.received} == {"/v1/responses"}

    con = sqlite3.connect(dbname)
    completions = rows(con, "chat_completions")
    assert len(completions) == 2
    first, second = completions
    assert (first["source_name"], first["model"], first["is_cached"]) == ("assistant", MODEL, 0)
    assert (first["prompt_tokens"], first["completion_tokens"]) == (1000, 50)
    assert first["cost"] == second["cost"] == pytest.approx(COST)
    request = json.loads(first["request"])
    assert request["messages"][-1]["content"] == "2+3?"
    assert "api_key" not in request
    response = json.loads(first["response"])
    assert response["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "add"
    assert response["usage"]["prompt_tokens_details"]["cached_tokens"] == 400
    assert response["usage"]["completion_tokens_details"]["reasoning_tokens"] == 30
    # the reasoning item the model returned goes back in the next request, and is logged there
    sent_back = [m for m in json.loads(second["request"])["messages"] if m.get("tool_calls")]
    assert len(sent_back) == 1
    assert [i["type"] for i in sent_back[0]["parley_reasoning"]] == ["reasoning"]

    chat = rows(con, "chats", "WHERE chat_id = ?", result.run_id)[0]
    assert chat["cost"] == pytest.approx(2 * COST)
    usage = json.loads(chat["usage"])
    assert usage == result.cost
    totals = usage["usage_including_cached_inference"][MODEL]
    assert (totals["cached_tokens"], totals["reasoning_tokens"]) == (800, 60)
    con.close()
    assert SENTINEL.encode() not in db_bytes(dbname)


def test_the_file_log_of_a_responses_chat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeLLMServer(api_key=SENTINEL) as fake:
        runtime_logging.start(logger_type="file", config={"filename": "run.log"})
        result = tool_chat(fake)
        runtime_logging.stop()
    text = (tmp_path / "autogen_logs" / "run.log").read_text()
    assert SENTINEL not in text
    completions = [r for r in map(json.loads, text.splitlines()) if "invocation_id" in r]
    assert [c["chat_id"] for c in completions] == [result.run_id] * 2
    assert completions[0]["cost"] == pytest.approx(COST)
    usage = completions[1]["response"]["usage"]
    assert usage["prompt_tokens_details"]["cached_tokens"] == 400
    assert usage["completion_tokens_details"]["reasoning_tokens"] == 30
