"""A durable chat that waits for its human: it pauses (or its process dies) at the question,
the answer comes from another process, and resuming goes on from it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from parley.durable import ChatPaused, ChatStore, PausingIO, RedisChatStore
from parley.exceptions import DurableChatError
from parley.io import IOStream
from parley.testing import FakeLLMServer

from . import chat_script as script
from .test_resume import ENV, _lines

FEEDBACK = "Also print the cubes."


@pytest.fixture(scope="module")
def server() -> Any:
    with FakeLLMServer(responder=script.respond) as s:
        yield s


def _run_child(
    server: FakeLLMServer, tmp: Path, store: str, mode: str
) -> subprocess.CompletedProcess[bytes]:
    argv = [sys.executable, str(Path(script.__file__)), "pair", json.dumps(server.config_list())]
    return subprocess.run(
        [*argv, str(tmp), store, mode, "0"], env=ENV, capture_output=True, timeout=60
    )


def _answer_and_resume(server: FakeLLMServer, tmp: Path, store: Any) -> None:
    [pending] = store.pending_inputs()
    assert (pending.chat_id, pending.agent) == (script.CHAT_ID, "user")
    assert "feedback to assistant" in pending.prompt
    assert store.answer(script.CHAT_ID, FEEDBACK) == pending
    with pytest.raises(DurableChatError, match="no pending input"):
        store.answer(script.CHAT_ID, "a second answer")
    assert store.pending_inputs() == []

    # Resumed with a pausing human again: it goes on from the answer to the next question.
    sent = len(server.received)
    chat = script.build("pair", server.config_list(), tmp, human_input_mode="TERMINATE")
    with IOStream.set_default(PausingIO()), pytest.raises(ChatPaused) as paused:
        chat.resume(store)
    assert (paused.value.chat_id, paused.value.agent) == (script.CHAT_ID, "user")
    assert len(server.received) == sent + 1  # only the answer to the feedback was asked for
    [again] = store.pending_inputs(script.CHAT_ID)
    assert again.key != pending.key

    store.answer(script.CHAT_ID, "exit", agent="user")
    chat = script.build("pair", server.config_list(), tmp, human_input_mode="TERMINATE")
    with IOStream.set_default(PausingIO()):
        result = chat.resume(store)
    assert result.termination_reason == "human_exit"
    assert result.human_input == [FEEDBACK, "exit"]
    assert any(m.get("content") == FEEDBACK for m in result.chat_history)
    assert store.status(script.CHAT_ID) == "done"
    assert len(server.received) == sent + 2  # the summary
    assert _lines(tmp / "tool.txt") == 1
    assert _lines(tmp / "work" / "code.txt") == 1


def test_a_paused_chat_is_answered_from_another_process_and_resumed(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.reset()
    done = _run_child(server, tmp_path, "sqlite", "pause")
    assert done.returncode == 3, done.stderr.decode()[-2000:]
    chat_id, agent, prompt = json.loads(done.stdout.decode().splitlines()[-1])
    assert (chat_id, agent) == (script.CHAT_ID, "user")
    assert "feedback" in prompt
    _answer_and_resume(server, tmp_path, ChatStore(tmp_path / "chats.db"))


@pytest.mark.redis
def test_a_chat_that_died_waiting_for_its_human_is_answered_in_redis(
    server: FakeLLMServer, tmp_path: Path, redis_url: str
) -> None:
    server.reset()
    done = _run_child(server, tmp_path, redis_url, "die-at-input")
    assert done.returncode == -9, done.stderr.decode()[-2000:]
    store = RedisChatStore(redis_url)
    try:
        _answer_and_resume(server, tmp_path, store)
    finally:
        store.close()


def test_pausing_needs_a_durable_chat(server: FakeLLMServer, tmp_path: Path) -> None:
    chat = script.build("pair", server.config_list(), tmp_path, human_input_mode="ALWAYS")
    with IOStream.set_default(PausingIO()), pytest.raises(DurableChatError, match="durable"):
        chat.run()
    store = ChatStore(tmp_path / "chats.db")
    with pytest.raises(DurableChatError, match="no pending input"):
        store.answer("nope", "hi")
