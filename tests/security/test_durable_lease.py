"""One owner at a time for a durable chat (issue 34, item 2).

A chat killed during its first model call, then resumed by two processes at once: both
replayed, both called the model, and a tool registered ``idempotent=False`` ran twice. Now the
first resume holds the chat's lease: a second ``resume`` and an ``initiate_chat`` of the same
chat id are refused with ``ChatLeaseError`` naming the holder, and every model request and the
tool run once. A killed owner is taken over at once on its own host; a stalled one (SIGSTOP)
blocks the chat until its lease expires, then a resume goes on, and the stalled run, woken,
is stopped at its next write instead of recording beside it. The same in SQLite and Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from parley.batch import run_chats
from parley.durable import ChatStore
from parley.exceptions import ChatLeaseError
from parley.testing import FakeLLMServer
from tests.durable import chat_script as script

from . import durable_owner as owner
from . import durable_victim as victim

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
TIMEOUT = 90.0
LEASE = 4.0  # seconds: short, so the test sees a stalled owner's lease expire
STORES = ["sqlite", pytest.param("redis", marks=pytest.mark.redis)]
LLM_CALLS = script.STEPS["pair"].count("llm_call")


class Gate:
    """The model, holding each request until the test opens the gate."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.asked = threading.Event()
        self.respond: Callable[[dict[str, Any]], Any] = script.respond

    async def __call__(self, body: dict[str, Any]) -> Any:
        self.asked.set()
        await asyncio.to_thread(self.opened.wait, TIMEOUT)
        return self.respond(body)


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def server(gate: Gate) -> Any:
    with FakeLLMServer(responder=gate) as s:
        yield s


@pytest.fixture
def spec(request: pytest.FixtureRequest) -> str:
    return "sqlite" if request.param == "sqlite" else request.getfixturevalue("redis_url")


def _wait(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _stall(pid: int, db: Path | None) -> None:
    """SIGSTOP ``pid`` at a moment it holds no write lock on the SQLite file ``db`` (None: the
    store is not SQLite). Its lease thread writes now and then; stopped inside such a write it
    would lock every other process out of the file (SQLite's lock, not the chat's lease), which
    is not the stalled-in-a-model-call owner these tests mean. On a loaded machine the stop lands
    in a write now and then: the owner is woken and stopped again."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        os.kill(pid, signal.SIGSTOP)
        _wait(lambda: _stopped(pid), f"process {pid} to stop")
        if db is None or not _write_locked(db):
            return
        os.kill(pid, signal.SIGCONT)
        assert time.monotonic() < deadline, f"{db} stayed locked by process {pid}"
        time.sleep(0.02)


def _stopped(pid: int) -> bool:
    """Every thread of the process stopped (state T), or the process gone."""
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue  # a thread that ended
        if stat.rsplit(")", 1)[1].split()[0] not in {"T", "Z", "X"}:
            return False
    return True


def _write_locked(db: Path) -> bool:
    with contextlib.closing(sqlite3.connect(db, timeout=0, isolation_level=None)) as con:
        try:
            con.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            if "locked" in str(error):
                return True
            raise
        con.execute("ROLLBACK")
    return False


def _killed_in_first_model_call(server: FakeLLMServer, tmp: Path, spec: str) -> None:
    argv = [sys.executable, script.__file__, "pair", json.dumps(server.config_list()), str(tmp)]
    done = subprocess.run(
        [*argv, spec, "start", "1", "not-idempotent"], env=ENV, capture_output=True, timeout=60
    )
    assert done.returncode == -9, done.stderr.decode()[-2000:]


def _start(server: FakeLLMServer, tmp: Path, spec: str, mode: str) -> subprocess.Popen[str]:
    argv = [sys.executable, owner.__file__, json.dumps(server.config_list()), str(tmp), spec]
    return subprocess.Popen(
        [*argv, str(LEASE), mode],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _ended(child: subprocess.Popen[str]) -> tuple[int, dict[str, Any]]:
    out, err = child.communicate(timeout=TIMEOUT)
    lines = [line for line in out.splitlines() if line.startswith("{")]
    return child.returncode, (json.loads(lines[-1]) if lines else {"stderr": err[-2000:]})


def _tool_runs(tmp: Path) -> int:
    path = tmp / "tool.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.parametrize("spec", STORES, indirect=True)
def test_a_second_resume_or_start_while_one_runs_is_refused_and_nothing_runs_twice(
    server: FakeLLMServer, gate: Gate, tmp_path: Path, spec: str
) -> None:
    _killed_in_first_model_call(server, tmp_path, spec)
    first = _start(server, tmp_path, spec, "resume")
    try:
        _wait(gate.asked.is_set, "the first resume's model call")
        second = _start(server, tmp_path, spec, "resume")
        third = _start(server, tmp_path, spec, "initiate")
        for child in (second, third):
            code, said = _ended(child)
            assert code == 4, said
            assert f":{first.pid}:" in said["owner"]
            assert script.CHAT_ID in said["error"]
            assert "running elsewhere" in said["error"]
    finally:
        gate.opened.set()
        code, said = _ended(first)
    assert code == 0, said

    requests = Counter(json.dumps(r.json["messages"], sort_keys=True) for r in server.received)
    assert sum(requests.values()) == LLM_CALLS
    assert set(requests.values()) == {1}
    assert _tool_runs(tmp_path) == 1


@pytest.mark.parametrize("spec", STORES, indirect=True)
def test_a_killed_owner_is_taken_over_and_a_stalled_one_after_its_lease_expires(
    server: FakeLLMServer, gate: Gate, tmp_path: Path, spec: str
) -> None:
    _killed_in_first_model_call(server, tmp_path, spec)
    store = owner.store_of(spec, tmp_path, LEASE)

    # Killed while it held the chat: on its own host, its lease is known to be free at once.
    killed = _start(server, tmp_path, spec, "resume")
    _wait(gate.asked.is_set, "the first resume's model call")
    assert f":{killed.pid}:" in str(store.lease(script.CHAT_ID) or "")
    killed.kill()
    assert _ended(killed)[0] == -signal.SIGKILL
    assert store.lease(script.CHAT_ID) is None

    # Stalled while it holds the chat: refused until its lease expires, then taken over.
    gate.asked.clear()
    stalled = _start(server, tmp_path, spec, "resume")
    try:
        _wait(gate.asked.is_set, "the second resume's model call")
        _stall(stalled.pid, tmp_path / "chats.db" if spec == "sqlite" else None)
        chat = script.build("pair", server.config_list(), tmp_path, idempotent=False)
        with pytest.raises(ChatLeaseError, match=f":{stalled.pid}:"):
            chat.resume(store)
        _wait(lambda: store.lease(script.CHAT_ID) is None, "the stalled owner's lease to expire")
        gate.opened.set()
        chat = script.build("pair", server.config_list(), tmp_path, idempotent=False)
        result = chat.resume(store)
        assert result.termination_reason is not None
    finally:
        gate.opened.set()
        os.kill(stalled.pid, signal.SIGCONT)
    code, said = _ended(stalled)
    assert code == 5, said
    assert said["lost"] is True
    assert "lost its lease" in said["error"]
    assert store.status(script.CHAT_ID) == "done"
    assert _tool_runs(tmp_path) == 1
    # Each request once, but the first model call: made by the killed, the stalled and the
    # last run, none of the first two recorded.
    requests = Counter(json.dumps(r.json["messages"], sort_keys=True) for r in server.received)
    assert sorted(requests.values()) == [1] * (LLM_CALLS - 1) + [3]


def test_a_batch_chat_waits_for_a_stalled_worker_and_the_stalled_one_stops(
    server: FakeLLMServer, gate: Gate, tmp_path: Path
) -> None:
    """A Ray worker that is merely slow, its chunk handed to another: here, a batch process
    stalled (SIGSTOP) in its chat's model call, and the same durable batch run again. The second
    run waits for the first one's lease to expire, then runs the chat; the first, woken, stops
    at its next write and its chat fails with ChatLeaseError. The chat ran once to its end."""
    gate.respond = victim.respond
    argv = [sys.executable, victim.__file__, json.dumps(server.config_list()), str(tmp_path)]
    slow = subprocess.Popen(
        [*argv, "batch-to-end", str(LEASE)],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait(gate.asked.is_set, "the slow worker's model call")
        _stall(slow.pid, victim.store_path(tmp_path))
        gate.opened.set()
        store = ChatStore(victim.store_path(tmp_path), lease_seconds=LEASE)
        assert f":{slow.pid}:" in str(store.lease(f"{victim.BATCH_ID}/0"))
        factory = victim.Factory(server.config_list(), tmp_path)
        batch = run_chats(factory, [0], store=store, batch_id=victim.BATCH_ID)
    finally:
        gate.opened.set()
        os.kill(slow.pid, signal.SIGCONT)
    out, err = slow.communicate(timeout=TIMEOUT)
    assert slow.returncode == 0, err[-2000:]
    assert batch.ok, batch.errors
    assert batch.results[0].chat_history[-1]["content"] == "TERMINATE"
    [(kind, message)] = json.loads(out.strip().splitlines()[-1])
    assert kind.endswith("ChatLeaseError")
    assert "lost its lease" in message
    requests = Counter(json.dumps(r.json["messages"], sort_keys=True) for r in server.received)
    assert sorted(requests.values())[-1] == 2  # the slow worker's request, never recorded
    assert sum(requests.values()) == len(requests) + 1
