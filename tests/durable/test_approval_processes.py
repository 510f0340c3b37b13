"""Approvals that wait as long as needed: a durable chat whose tool call or code waits for the
human pauses (or its process is SIGKILLed while it waits); another process lists the pending
approval, with the call or the code, and answers it; ``resume``, in yet another process, runs
exactly that call once, or gives the model the rejection with the human's reason."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from parley.coding import CodeBlock
from parley.durable import ChatStore, PendingInput, RedisChatStore
from parley.events import InputRequestEvent, ToolApproval, parse_event
from parley.exceptions import DurableChatError
from parley.testing import FakeLLMServer

from . import approval_chat as script
from .test_resume import ENV, _lines

ARCHIVE_PROMPT = "Approve the call of archive (call ID: call_archive)"


@pytest.fixture(scope="module")
def server() -> Any:
    with FakeLLMServer(responder=script.respond) as s:
        yield s


def child(
    server: FakeLLMServer, tmp: Path, store: str, human: str, action: str
) -> subprocess.CompletedProcess[str]:
    """Run the chat script in a process of its own, to its end, pause or death."""
    argv = [sys.executable, str(Path(script.__file__)), json.dumps(server.config_list())]
    return subprocess.run(
        [*argv, str(tmp), store, human, action],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )


def paused(done: subprocess.CompletedProcess[str]) -> list[Any]:
    assert done.returncode == script.PAUSED, done.stderr[-2000:]
    return list(json.loads(done.stdout.splitlines()[-1]))


def killed(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == -9, done.stderr[-2000:]


def ended(done: subprocess.CompletedProcess[str]) -> list[Any]:
    assert done.returncode == 0, done.stderr[-2000:]
    return list(json.loads(done.stdout.splitlines()[-1]))


def the_pending_tool_call(store: Any) -> PendingInput:
    [pending] = store.pending_inputs()
    assert (pending.chat_id, pending.agent) == (script.CHAT_ID, "user")
    assert pending.is_approval
    assert pending.code_blocks is None
    assert pending.tool_call is not None
    assert pending.tool_call.name == "archive"
    assert pending.tool_call.arguments == {"folder": "logs"}
    assert pending.tool_call.call_id == "call_archive"
    assert pending.prompt.startswith(ARCHIVE_PROMPT)
    return pending


def the_pending_code(store: Any) -> PendingInput:
    [pending] = store.pending_inputs()
    assert (pending.chat_id, pending.agent) == (script.CHAT_ID, "user")
    assert pending.is_approval
    assert pending.tool_call is None
    code = "open('code.txt', 'a').write('ran\\n')\nprint('counted 3 logs')"
    assert pending.code_blocks == (CodeBlock(code=code, language="python"),)
    assert pending.prompt.startswith("Approve running this code block?")
    return pending


def last_user_contents(server: FakeLLMServer) -> list[str]:
    """What the model was told after each of its turns (the last message of each request)."""
    return [str(r.json["messages"][-1]["content"]) for r in server.received]


def test_a_paused_approval_is_answered_from_another_process(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.reset()
    store = ChatStore(tmp_path / "chats.db")

    # The first process pauses at the tool call's approval and exits.
    chat_id, agent, prompt = paused(child(server, tmp_path, "sqlite", "pause", "start"))
    assert (chat_id, agent) == (script.CHAT_ID, "user")
    assert prompt.startswith(ARCHIVE_PROMPT)
    pending = the_pending_tool_call(store)
    assert store.answer(script.CHAT_ID, "") == pending
    with pytest.raises(DurableChatError, match="no pending input"):
        store.answer(script.CHAT_ID, "a second answer")
    assert _lines(tmp_path / "tool.txt") == 0

    # A second process resumes: the approved call runs, once; then the code waits.
    paused(child(server, tmp_path, "sqlite", "pause", "resume"))
    assert _lines(tmp_path / "tool.txt") == 1
    the_pending_code(store)
    store.answer(script.CHAT_ID, "Don't write files, only count.")

    # A third process, whose human cannot answer anything, ends the chat from the store's
    # answers: the code never runs, the model reads why, and the tool does not run again.
    reason, human_input = ended(child(server, tmp_path, "sqlite", "none", "resume"))
    assert human_input == ["", "Don't write files, only count."]
    assert reason == "is_termination_msg"
    assert _lines(tmp_path / "tool.txt") == 1
    assert _lines(tmp_path / "work" / "code.txt") == 0
    assert last_user_contents(server) == [
        script.TASK,
        "archived logs",
        "exitcode: 1 (execution failed)\nCode output: "
        "Error: the human rejected the code: Don't write files, only count.",
    ]
    assert store.status(script.CHAT_ID) == "done"
    assert store.pending_inputs() == []


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_a_process_killed_while_it_waits_for_an_approval(
    server: FakeLLMServer, tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    server.reset()
    spec = "sqlite" if backend == "sqlite" else request.getfixturevalue("redis_url")
    store = script.store_of(spec, tmp_path)
    try:
        # SIGKILLed while it waits for the tool call's approval: nothing ran.
        killed(child(server, tmp_path, spec, "die", "start"))
        assert store.status(script.CHAT_ID) == "running"
        the_pending_tool_call(store)
        store.answer(script.CHAT_ID, "Not now: the auditors need them.")

        # Resumed, and SIGKILLed again while it waits for the code's approval.
        killed(child(server, tmp_path, spec, "die", "resume"))
        assert _lines(tmp_path / "tool.txt") == 0
        the_pending_code(store)
        store.answer(script.CHAT_ID, "")

        # The last process runs the approved code, exactly once, and ends.
        reason, human_input = ended(child(server, tmp_path, spec, "none", "resume"))
        assert human_input == ["Not now: the auditors need them.", ""]
        assert reason == "is_termination_msg"
        assert _lines(tmp_path / "tool.txt") == 0
        assert _lines(tmp_path / "work" / "code.txt") == 1
        told = last_user_contents(server)
        assert told[:2] == [
            script.TASK,
            "Error: the human rejected the call of archive: Not now: the auditors need them.",
        ]
        assert told[2].startswith("exitcode: 0 (execution succeeded)")
        assert "counted 3 logs" in told[2]
        assert len(told) == 3  # each model request made once, across the four processes
        assert store.status(script.CHAT_ID) == "done"
    finally:
        if isinstance(store, RedisChatStore):
            store.close()


def test_exit_from_the_store_ends_the_resumed_chat(server: FakeLLMServer, tmp_path: Path) -> None:
    server.reset()
    store = ChatStore(tmp_path / "chats.db")
    paused(child(server, tmp_path, "sqlite", "pause", "start"))
    store.answer(script.CHAT_ID, "exit")
    reason, human_input = ended(child(server, tmp_path, "sqlite", "none", "resume"))
    assert (reason, human_input) == ("human_exit", ["exit"])
    assert _lines(tmp_path / "tool.txt") == 0
    assert len(server.received) == 1
    assert store.status(script.CHAT_ID) == "done"


def test_a_run_yields_the_approval_request_then_dies_and_another_process_approves(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.reset()
    store = ChatStore(tmp_path / "chats.db")
    done = child(server, tmp_path, "sqlite", "run", "start")
    killed(done)
    # The run's consumer saw the approval request, with the call waiting for it.
    event = parse_event(json.loads(done.stdout.splitlines()[-1]))
    assert isinstance(event, InputRequestEvent)
    assert event.content.tool_call == ToolApproval(
        name="archive", arguments={"folder": "logs"}, call_id="call_archive"
    )
    assert (event.content.agent, event.content.sender) == ("user", "assistant")
    assert event.content.prompt.startswith(ARCHIVE_PROMPT)

    # The store kept the same question: approved from here, the call runs once on resume.
    the_pending_tool_call(store)
    store.answer(script.CHAT_ID, "")
    paused(child(server, tmp_path, "sqlite", "pause", "resume"))
    assert _lines(tmp_path / "tool.txt") == 1
    the_pending_code(store)
    store.answer(script.CHAT_ID, "")
    reason, human_input = ended(child(server, tmp_path, "sqlite", "none", "resume"))
    assert (reason, human_input) == ("is_termination_msg", ["", ""])
    assert _lines(tmp_path / "tool.txt") == 1
    assert _lines(tmp_path / "work" / "code.txt") == 1
