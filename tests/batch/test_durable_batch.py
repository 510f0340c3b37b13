"""A durable batch (``store=``, ``batch_id=``): killed at any point, run again, it replays
what finished, resumes what was running and starts the rest; the model sees only the work
that was not done."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from parley.batch import BatchItem, run_chats
from parley.durable import ChatStore
from parley.testing import FakeLLMServer

from .chats import GroupOfThree, PairChat, TwoInARow, agents, histories, respond, task_of

CHATS = 60
TURNS = 3
REQUESTS_PER_CHAT = 2 * TURNS - 1
KILL_AFTER_DONE = 20
TIMEOUT = 60.0


def _requests_by_task(server: FakeLLMServer, since: int) -> Counter[int]:
    return Counter(task_of(body) for body in server.requests[since:])


def test_a_killed_batch_runs_again_only_what_did_not_finish(
    server: FakeLLMServer, config: dict[str, Any], tmp_path: Path
) -> None:
    expected = histories(run_chats(PairChat(config, turns=TURNS), range(CHATS)))
    server.responder = lambda body: {"content": respond(body), "delay": 0.02}
    path = tmp_path / "chats.db"
    store = ChatStore(path)
    script = Path(__file__).with_name("chats.py")
    first = len(server.requests)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [sys.executable, str(script), json.dumps(config), str(path), "eval", str(CHATS), "6"],
        env=env,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while len(store.chats("done")) < KILL_AFTER_DONE:
            assert child.poll() is None, "the batch ended before it was killed"
            assert time.monotonic() < deadline, "the batch made no progress"
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait(TIMEOUT)
    done = set(store.chats("done"))
    running = set(store.chats("running"))
    assert KILL_AFTER_DONE <= len(done) < CHATS
    assert running
    recorded = {
        chat_id: sum(
            1 for key, _, result in store.steps(chat_id) if key.startswith("llm/") and result
        )
        for chat_id in running
    }
    before = len(server.requests)
    assert _requests_by_task(server, first).keys() >= {int(c.split("/")[1]) for c in done}

    batch = run_chats(
        PairChat(config, turns=TURNS), range(CHATS), store=store, batch_id="eval", concurrency=6
    )
    assert batch.ok
    assert histories(batch) == expected
    assert batch.chat_ids == [f"eval/{i}" for i in range(CHATS)]
    assert store.chats("done")
    assert not store.chats("running")
    again = _requests_by_task(server, before)
    for chat_id in done:  # replayed: not one request
        assert again[int(chat_id.split("/")[1])] == 0
    for chat_id in running:  # resumed: only the requests whose answers were not recorded
        assert again[int(chat_id.split("/")[1])] == REQUESTS_PER_CHAT - recorded[chat_id]
    started = {f"eval/{i}" for i in range(CHATS)} - done - running
    for chat_id in started:  # never started: the whole chat
        assert again[int(chat_id.split("/")[1])] == REQUESTS_PER_CHAT
    # The usage of the batch is every chat's, replayed ones included (as recorded).
    assert batch.usage.llm_calls == CHATS * REQUESTS_PER_CHAT


def test_a_finished_batch_replays_without_requests(
    server: FakeLLMServer, config: dict[str, Any], tmp_path: Path
) -> None:
    store = ChatStore(tmp_path / "chats.db", synchronous="NORMAL")
    tasks = [{"name": f"t{i}", "n": i} for i in range(8)]

    async def by_name(item: BatchItem[dict[str, Any]]) -> Any:
        user, assistant = agents(config)
        task = item.input["n"]
        return await item.a_initiate_chat(
            user, assistant, message=f"Solve task {task}.", max_turns=2
        )

    first = run_chats(by_name, tasks, store=store, batch_id="b", key=lambda t: t["name"])
    assert first.ok
    assert first.chat_ids == [f"b/t{i}" for i in range(8)]
    count = len(server.requests)
    again = run_chats(
        by_name, list(reversed(tasks)), store=store, batch_id="b", key=lambda t: t["name"]
    )
    assert len(server.requests) == count  # all replayed from the store
    assert histories(again) == list(reversed(histories(first)))
    with pytest.raises(ValueError, match="the same key 't1'"):
        run_chats(by_name, [tasks[1], tasks[1]], store=store, batch_id="b", key=lambda t: t["name"])


def test_a_factory_that_bypasses_the_item_is_not_durable_and_says_so(
    config: dict[str, Any], tmp_path: Path
) -> None:
    store = ChatStore(tmp_path / "chats.db", synchronous="NORMAL")

    async def direct(item: BatchItem[int]) -> Any:
        user, assistant = agents(config)
        return await user.a_initiate_chat(
            assistant, message=f"Solve task {item.input}.", max_turns=1
        )

    with pytest.warns(UserWarning, match="3 chats of the durable batch 'd' were not run by item"):
        batch = run_chats(direct, range(3), store=store, batch_id="d")
    assert batch.ok
    assert store.chats() == []


@pytest.mark.parametrize("chat", [GroupOfThree, TwoInARow], ids=["group chat", "chat queue"])
def test_group_chats_and_chat_queues_replay_too(
    chat: Any, server: FakeLLMServer, config: dict[str, Any], tmp_path: Path
) -> None:
    store = ChatStore(tmp_path / "chats.db", synchronous="NORMAL")
    first = run_chats(chat(config), range(6), store=store, batch_id="kinds")
    assert first.ok
    count = len(server.requests)
    again = run_chats(chat(config), range(6), store=store, batch_id="kinds")
    assert len(server.requests) == count
    assert histories(again) == histories(first)
    assert sorted(store.chats("done")) == sorted(f"kinds/{i}" for i in range(6))
