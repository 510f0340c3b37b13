"""Durable chats (a two-agent chat, a group chat, a chat queue) killed with SIGKILL, in a
child process, at every step, then resumed here: the same histories, counters and result as an
uninterrupted run, and no model request, tool call or code block made twice but the one that
was in flight."""

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
from parley.durable import ChatStore
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
def baselines(server: FakeLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Each scenario's uninterrupted run, without a store: what every resumed run must end as."""
    out = {}
    for scenario in script.SCENARIOS:
        server.reset()
        chat = script.build(scenario, server.config_list(), tmp_path_factory.mktemp(scenario))
        result = chat.run()
        requests = Counter(_request_key(r.json) for r in server.received)
        out[scenario] = (_outcome(result), chat.state(), requests)
    return out


def _outcome(result: Any) -> Any:
    """What a user reads off a chat's result (a queue's: each chat's)."""
    if isinstance(result, list):
        return [_outcome(r) for r in result]
    if isinstance(result, dict):
        return {k: _outcome(r) for k, r in result.items()}
    return (result.chat_history, result.summary, result.termination_reason, result.cost)


def _request_key(body: Any) -> str:
    return json.dumps(body["messages"], sort_keys=True)


def _kill_at(
    server: FakeLLMServer,
    tmp: Path,
    mode: str,
    k: int,
    *flags: str,
    scenario: str = "pair",
    store: str = "sqlite",
) -> None:
    argv = [sys.executable, str(Path(script.__file__)), scenario, json.dumps(server.config_list())]
    done = subprocess.run(
        [*argv, str(tmp), store, mode, str(k), *flags], env=ENV, capture_output=True, timeout=60
    )
    assert done.returncode == -9, done.stderr.decode()[-2000:]


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _check_resumed(
    server: FakeLLMServer, baselines: Any, tmp: Path, scenario: str, store: Any, mode: str, k: int
) -> None:
    expected, expected_state, expected_requests = baselines[scenario]
    chat = script.build(scenario, server.config_list(), tmp)
    result = chat.resume(store)

    assert _outcome(result) == expected
    assert chat.state() == expected_state
    # "end": the k-th step's work was done, its result not committed: it is redone, once.
    redone = script.STEPS[scenario][k - 1] if mode == "end" else None
    requests = Counter(_request_key(r.json) for r in server.received)
    assert set(requests) == set(expected_requests)
    assert sum(requests.values()) == sum(expected_requests.values()) + (redone == "llm_call")
    assert _lines(tmp / "tool.txt") == 1 + (redone == "tool_call")
    assert _lines(tmp / "work" / "code.txt") == 1 + (redone == "code_execution")


CASES = [
    (scenario, mode, k)
    for scenario, steps in script.STEPS.items()
    # a concurrent queue's k-th step has no fixed kind: only "start" knows what is redone
    for mode in (("start",) if scenario == "concurrent" else ("start", "end"))
    for k in range(1, len(steps) + 1)
]


@pytest.mark.parametrize(("scenario", "mode", "k"), CASES)
def test_killed_at_any_step_resumes_to_the_same_result(
    server: FakeLLMServer, baselines: Any, tmp_path: Path, scenario: str, mode: str, k: int
) -> None:
    server.reset()
    _kill_at(server, tmp_path, mode, k, scenario=scenario)
    store = ChatStore(tmp_path / "chats.db")
    _check_resumed(server, baselines, tmp_path, scenario, store, mode, k)


@pytest.mark.redis
@pytest.mark.parametrize("scenario", ["pair", "group"])
@pytest.mark.parametrize("k", [2, 4])
def test_a_chat_in_redis_resumes_the_same_way(
    server: FakeLLMServer, baselines: Any, tmp_path: Path, redis_url: str, scenario: str, k: int
) -> None:
    server.reset()
    _kill_at(server, tmp_path, "end", k, scenario=scenario, store=redis_url)
    store = parley.durable.RedisChatStore(redis_url)
    assert store.status(script.CHAT_ID) == "running"
    try:
        _check_resumed(server, baselines, tmp_path, scenario, store, "end", k)
        assert store.status(script.CHAT_ID) == "done"
    finally:
        store.close()


async def test_async_resume_and_a_finished_chat_replays_without_requests(
    server: FakeLLMServer, baselines: Any, tmp_path: Path
) -> None:
    server.reset()
    _kill_at(server, tmp_path, "start", 3)  # tool done, second model call not started
    store = ChatStore(tmp_path / "chats.db")
    assert await store.a_status(script.CHAT_ID) == "running"
    assert await store.a_chats("running") == [script.CHAT_ID]
    chat = script.build("pair", server.config_list(), tmp_path)
    result = await chat.resume(store, asynchronous=True)
    assert _outcome(result) == baselines["pair"][0]
    assert await store.a_status(script.CHAT_ID) == "done"
    sent = len(server.received)

    seen: list[parley._core.events.Step] = []

    class Calls(parley._core.events.Listener):
        def on_step_end(self, step: parley._core.events.Step) -> None:
            if step.kind == "llm_call":
                seen.append(step)

    chat = script.build("pair", server.config_list(), tmp_path)
    listener = Calls()
    parley._core.events.add_listener(listener)
    try:
        again = await chat.resume(store, asynchronous=True)
    finally:
        parley._core.events.remove_listener(listener)
    assert _outcome(again) == baselines["pair"][0]
    assert len(server.received) == sent  # everything replayed...
    assert _lines(tmp_path / "tool.txt") == 1
    # ... and reported to listeners (the logger, the tracer) as replayed calls
    assert len(seen) == 4
    assert all(s.attrs["replayed"] and s.attrs["cost"] == 0 for s in seen)


def test_a_non_idempotent_tool_killed_mid_call_is_not_rerun_silently(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.reset()
    _kill_at(server, tmp_path, "end", 2, "not-idempotent")  # the tool ran; no result recorded
    store = ChatStore(tmp_path / "chats.db")
    chat = script.build("pair", server.config_list(), tmp_path, idempotent=False)
    with pytest.raises(UncertainToolCallError, match="'record'") as info:
        chat.resume(store)
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

    chat = script.build("pair", server.config_list(), tmp_path, idempotent=False)
    result = chat.resume(store, on_uncertain_tool=decide)
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
        chat = script.build("pair", server.config_list(), tmp, idempotent=False)
        result = chat.resume(ChatStore(tmp / "chats.db"), on_uncertain_tool=decide)
        assert text in result.chat_history[2]["content"]
        assert _lines(tmp / "tool.txt") == runs


def test_refusals(server: FakeLLMServer, tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "chats.db")
    chat = script.build("pair", server.config_list(), tmp_path)
    user, assistant = chat.agents["user"], chat.agents["assistant"]
    with pytest.raises(ValueError, match="chat_id"):
        chat.run(store=store)
    with pytest.raises(DurableChatError, match="no chat 'nope'"):
        parley.durable.resume("nope", store=store, sender=user, recipient=assistant)
    server.reset()
    chat.run(store=store, chat_id="done")
    with pytest.raises(DurableChatError, match="already in"):
        chat.run(store=store, chat_id="done")
    other = parley.AssistantAgent("other", llm_config=server.llm_config())
    with pytest.raises(DurableChatError, match="recipient 'assistant'"):
        parley.durable.resume("done", store=store, sender=user, recipient=other)
    with pytest.raises(DurableChatError, match="sender= and recipient="):
        parley.durable.resume("done", store=store, sender=user, chat_queue=[])
    twin = parley.AssistantAgent("user", llm_config=server.llm_config())
    with pytest.raises(ValueError, match="different names"):
        user.initiate_chat(twin, message="hi", store=store, chat_id="twins")
    with pytest.raises(ValueError, match="store="):
        user.initiate_chats([{"recipient": assistant, "message": "hi"}], chat_id="q")

    queue = script.build("queue", server.config_list(), tmp_path)
    queue.run(store=store, chat_id="a-queue")
    with pytest.raises(DurableChatError, match="chat_queue="):
        parley.durable.resume("a-queue", store=store, sender=user, recipient=assistant)


def test_a_resumed_chat_that_takes_another_path_fails_at_once(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.reset()
    _kill_at(server, tmp_path, "start", 5)
    chat = script.build("pair", server.config_list(), tmp_path)
    with pytest.raises(parley.exceptions.ReplayDivergedError):
        chat.resume(ChatStore(tmp_path / "chats.db"), message="another task")


def test_a_cached_response_is_replayed_as_cached(server: FakeLLMServer, tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "chats.db")
    with parley.Cache.disk(cache_path_root=str(tmp_path / "cache")) as cache:
        script.build("pair", server.config_list(), tmp_path / "a").run(cache=cache)
        sent = len(server.received)
        chat = script.build("pair", server.config_list(), tmp_path / "b")
        live = chat.run(cache=cache, store=store, chat_id=script.CHAT_ID)
    assert len(server.received) == sent  # the cache answered every call
    assert live.cost["usage_excluding_cached_inference"] == {"total_cost": 0}
    replayed = script.build("pair", server.config_list(), tmp_path / "b").resume(store)
    assert len(server.received) == sent
    assert replayed.cost == live.cost
