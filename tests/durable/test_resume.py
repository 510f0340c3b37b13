"""A durable two-agent chat killed (SIGKILL, in a child process) at every step, then resumed
here: the same histories, counters and result as an uninterrupted run, and no model request,
tool call or code block made twice but the one that was in flight."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import parley
from parley.durable import ChatStore, a_resume, resume
from parley.exceptions import DurableChatError, UncertainToolCallError
from parley.testing import FakeLLMServer

from . import chat_script as script

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def server() -> Any:
    with FakeLLMServer(responder=script.respond) as s:
        yield s


@pytest.fixture(scope="module")
def baseline(server: FakeLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """An uninterrupted run, without a store: what every resumed run must end as."""
    server.reset()
    user, assistant = script.build(server.config_list(), tmp_path_factory.mktemp("baseline"))
    result = script.chat(user, assistant)
    requests = Counter(_request_key(r.json) for r in server.received)
    return result, _state(user, assistant), requests


def _request_key(body: Any) -> str:
    return json.dumps(body["messages"], sort_keys=True)


def _state(user: Any, assistant: Any) -> Any:
    """Both agents' histories and counters, by partner name."""
    return [
        (
            {a.name: m for a, m in agent.chat_messages.items()},
            {a.name: n for a, n in agent._consecutive_auto_reply_counter.items()},
            list(agent.state.human_input),
        )
        for agent in (user, assistant)
    ]


def _kill_at(server: FakeLLMServer, tmp: Path, mode: str, k: int, *flags: str) -> None:
    argv = [sys.executable, str(Path(script.__file__)), json.dumps(server.config_list())]
    done = subprocess.run(
        [*argv, str(tmp), mode, str(k), *flags], env=ENV, capture_output=True, timeout=60
    )
    assert done.returncode == -9, done.stderr.decode()[-2000:]


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.parametrize("mode", ["start", "end"])
@pytest.mark.parametrize("k", range(1, len(script.STEPS) + 1))
def test_killed_at_any_step_resumes_to_the_same_result(
    server: FakeLLMServer, baseline: Any, tmp_path: Path, mode: str, k: int
) -> None:
    expected, expected_state, expected_requests = baseline
    server.reset()
    _kill_at(server, tmp_path, mode, k)
    user, assistant = script.build(server.config_list(), tmp_path)
    store = ChatStore(tmp_path / "chats.db")
    result = resume(script.CHAT_ID, store=store, sender=user, recipient=assistant)

    assert result.chat_history == expected.chat_history
    assert result.summary == expected.summary
    assert result.termination_reason == expected.termination_reason
    assert _state(user, assistant) == expected_state
    # "end": the k-th step's work was done, its result not committed: it is redone, once.
    redone = script.STEPS[k - 1] if mode == "end" else None
    requests = Counter(_request_key(r.json) for r in server.received)
    assert set(requests) == set(expected_requests)
    assert sum(requests.values()) == len(expected_requests) + (redone == "llm_call")
    assert max(requests.values()) == 1 + (redone == "llm_call")
    assert _lines(tmp_path / "tool.txt") == 1 + (redone == "tool_call")
    assert _lines(tmp_path / "work" / "code.txt") == 1 + (redone == "code_execution")


async def test_async_resume_and_a_finished_chat_replays_without_requests(
    server: FakeLLMServer, baseline: Any, tmp_path: Path
) -> None:
    server.reset()
    _kill_at(server, tmp_path, "start", 3)  # tool done, second model call not started
    store = ChatStore(tmp_path / "chats.db")
    assert await store.status(script.CHAT_ID) == "running"
    user, assistant = script.build(server.config_list(), tmp_path)
    result = await a_resume(script.CHAT_ID, store=store, sender=user, recipient=assistant)
    assert result.chat_history == baseline[0].chat_history
    assert await store.status(script.CHAT_ID) == "done"
    sent = len(server.received)

    user, assistant = script.build(server.config_list(), tmp_path)
    again = await a_resume(script.CHAT_ID, store=store, sender=user, recipient=assistant)
    assert again.chat_history == baseline[0].chat_history
    assert again.summary == baseline[0].summary
    assert len(server.received) == sent  # everything replayed
    assert _lines(tmp_path / "tool.txt") == 1


def test_a_non_idempotent_tool_killed_mid_call_is_not_rerun_silently(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.reset()
    _kill_at(server, tmp_path, "end", 2, "not-idempotent")  # the tool ran; no result recorded
    store = ChatStore(tmp_path / "chats.db")
    user, assistant = script.build(server.config_list(), tmp_path, idempotent=False)
    with pytest.raises(UncertainToolCallError, match="'record'") as info:
        resume(script.CHAT_ID, store=store, sender=user, recipient=assistant)
    assert (info.value.tool, info.value.call_id, info.value.arguments) == (
        "record",
        "call_1",
        {"text": "hi"},
    )
    assert _lines(tmp_path / "tool.txt") == 1

    asked: list[parley.durable.UncertainCall] = []

    def decide(call: parley.durable.UncertainCall) -> str:
        asked.append(call)
        return "it was recorded"

    user, assistant = script.build(server.config_list(), tmp_path, idempotent=False)
    result = resume(
        script.CHAT_ID, store=store, sender=user, recipient=assistant, on_uncertain_tool=decide
    )
    assert [c.name for c in asked] == ["record"]
    assert result.chat_history[2]["content"] == "it was recorded"
    assert result.chat_history[-1]["content"] == "TERMINATE"
    assert _lines(tmp_path / "tool.txt") == 1  # not run again


def test_rerun_and_skip_answers(server: FakeLLMServer, tmp_path: Path) -> None:
    for choice, runs, text in (("rerun", 2, "recorded hi"), ("skip", 1, "not run again")):

        def decide(call: parley.durable.UncertainCall, choice: str = choice) -> str:
            return choice

        tmp = tmp_path / choice
        tmp.mkdir()
        server.reset()
        _kill_at(server, tmp, "end", 2, "not-idempotent")
        user, assistant = script.build(server.config_list(), tmp, idempotent=False)
        result = resume(
            script.CHAT_ID,
            store=ChatStore(tmp / "chats.db"),
            sender=user,
            recipient=assistant,
            on_uncertain_tool=decide,
        )
        assert text in result.chat_history[2]["content"]
        assert _lines(tmp / "tool.txt") == runs


def test_refusals(server: FakeLLMServer, tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "chats.db")
    user, assistant = script.build(server.config_list(), tmp_path)
    with pytest.raises(ValueError, match="chat_id"):
        script.chat(user, assistant, store=store)
    with pytest.raises(DurableChatError, match="no chat 'nope'"):
        resume("nope", store=store, sender=user, recipient=assistant)
    server.reset()
    script.chat(user, assistant, store=store, chat_id="done")
    with pytest.raises(DurableChatError, match="already in"):
        script.chat(user, assistant, store=store, chat_id="done")
    other = parley.AssistantAgent("other", llm_config=server.llm_config())
    with pytest.raises(DurableChatError, match="recipient 'assistant'"):
        resume("done", store=store, sender=user, recipient=other)


def test_a_resumed_chat_that_takes_another_path_fails_at_once(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.reset()
    _kill_at(server, tmp_path, "start", 5)
    user, assistant = script.build(server.config_list(), tmp_path)
    with pytest.raises(parley.exceptions.ReplayDivergedError):
        resume(
            script.CHAT_ID,
            store=ChatStore(tmp_path / "chats.db"),
            sender=user,
            recipient=assistant,
            message="another task",
        )
