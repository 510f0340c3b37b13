"""A durable two-agent chat with a tool call on OpenAI's Responses API (``api_type:
"responses"``) with a reasoning model: killed in a child process, resumed here, it ends as an
uninterrupted run does, the recorded model calls are not asked again, and the reasoning items
the model returned before the kill (on the assistant messages as ``parley_reasoning``) come
back from the journal and go back to the strict fake server, which refuses a reasoning item it
cannot read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parley.durable import ChatStore
from parley.testing import FakeLLMServer

from . import chat_script as script

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
MODEL = "o4-mini"
REASONING = "parley_reasoning"


def _thinking(body: dict[str, Any]) -> Any:
    """The script's model, each answer with reasoning tokens: the fake server then returns a
    reasoning item before it, as a reasoning model does."""
    answer = script.respond(body)
    reply = {"content": answer} if isinstance(answer, str) else dict(answer)
    return {**reply, "usage": {"completion_tokens_details": {"reasoning_tokens": 7}}}


def _server() -> FakeLLMServer:
    # A new server numbers its responses from 1, so a run's reasoning items are named alike.
    return FakeLLMServer(responder=_thinking)


def _config_list(server: FakeLLMServer) -> list[dict[str, Any]]:
    return server.config_list(model=MODEL, api_type="responses")


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The uninterrupted run without a store: its outcome, histories and requests."""
    with _server() as server:
        chat = script.build("pair", _config_list(server), tmp_path_factory.mktemp("pair"))
        result = chat.run()
        return _outcome(result), chat.state(), [r.json for r in server.received]


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with _server() as s:
        yield s


def _outcome(result: Any) -> Any:
    return (result.chat_history, result.summary, result.termination_reason, result.cost)


def _kill_at(server: FakeLLMServer, tmp: Path, mode: str, k: int) -> None:
    argv = [sys.executable, str(Path(script.__file__)), "pair", json.dumps(_config_list(server))]
    done = subprocess.run(
        [*argv, str(tmp), "sqlite", mode, str(k)], env=ENV, capture_output=True, timeout=60
    )
    assert done.returncode == -9, done.stderr.decode()[-2000:]


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _reasoning_sent(body: dict[str, Any]) -> list[str]:
    return [i["encrypted_content"] for i in body["input"] if i.get("type") == "reasoning"]


def test_the_uninterrupted_run_keeps_reasoning_items_on_the_history(baseline: Any) -> None:
    (history, *_), _, requests = baseline
    # the assistant's three turns (a tool call, code, TERMINATE), each with its reasoning
    answers = [m for m in history if m.get(REASONING)]
    assert len(answers) == 3
    assert all(body["store"] is False for body in requests)
    # each request carries back every reasoning item returned before it (the last one asks
    # for the summary)
    assert [len(_reasoning_sent(body)) for body in requests] == [0, 1, 2, 3]


@pytest.mark.parametrize("k", range(1, len(script.STEPS["pair"]) + 1))
def test_killed_before_a_step_resumes_to_the_same_history(
    server: FakeLLMServer, baseline: Any, tmp_path: Path, k: int
) -> None:
    expected, expected_state, expected_requests = baseline
    _kill_at(server, tmp_path, "start", k)
    before = len(server.received)
    chat = script.build("pair", _config_list(server), tmp_path)
    result = chat.resume(ChatStore(tmp_path / "chats.db"))

    assert _outcome(result) == expected
    assert chat.state() == expected_state
    # the recorded calls were replayed: the killed run and the resumed one asked, between
    # them, exactly the uninterrupted run's requests, reasoning items and all
    assert [r.json for r in server.received] == expected_requests
    resumed = [r.json for r in server.received[before:]]
    assert len(resumed) == sum(s == "llm_call" for s in script.STEPS["pair"][k - 1 :])
    assert _lines(tmp_path / "tool.txt") == 1
    assert _lines(tmp_path / "work" / "code.txt") == 1


def test_reasoning_from_before_the_kill_goes_back_after_it(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    _kill_at(server, tmp_path, "start", 3)  # the first call and the tool done, then killed
    killed = [r.json for r in server.received]
    assert len(killed) == 1
    chat = script.build("pair", _config_list(server), tmp_path)
    result = chat.resume(ChatStore(tmp_path / "chats.db"))

    first_call = result.chat_history[1]
    assert first_call["tool_calls"][0]["function"]["name"] == "record"
    recorded = first_call[REASONING]
    assert [item["type"] for item in recorded] == ["reasoning"]
    # the item the dead process was given, read back from the journal and sent again: the
    # strict server (store false) answers only a reasoning item with its encrypted content
    next_request = server.received[1].json
    assert _reasoning_sent(next_request) == [recorded[0]["encrypted_content"]]
    assert recorded[0]["encrypted_content"] == "fake-reasoning-of-resp_fake_1"
    assert result.chat_history[-1]["content"] == "TERMINATE"


def test_killed_after_a_model_call_asks_it_once_more(
    server: FakeLLMServer, baseline: Any, tmp_path: Path
) -> None:
    (expected_history, *_), _, expected_requests = baseline
    _kill_at(server, tmp_path, "end", 3)  # the second call answered, its answer not recorded
    chat = script.build("pair", _config_list(server), tmp_path)
    result = chat.resume(ChatStore(tmp_path / "chats.db"))

    asked = [r.json for r in server.received]
    assert len(asked) == len(expected_requests) + 1
    assert asked[1] == asked[2] == expected_requests[1]  # the lost answer, asked again
    # the answer asked again is a new response (its reasoning item named anew); the rest of
    # the history is the uninterrupted run's
    assert [_shape(m) for m in result.chat_history] == [_shape(m) for m in expected_history]
    assert _reasoning_sent(asked[-2]) == [
        "fake-reasoning-of-resp_fake_1",
        "fake-reasoning-of-resp_fake_3",
    ]
    assert _lines(tmp_path / "tool.txt") == 1


def _shape(message: dict[str, Any]) -> Any:
    """A message without its reasoning items' names."""
    items = [
        {k: v for k, v in i.items() if k not in ("id", "encrypted_content")}
        for i in message.get(REASONING, ())
    ]
    return {**message, REASONING: items}
