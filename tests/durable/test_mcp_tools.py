"""Durable chats whose executor runs a real MCP server's tool (the demo server over stdio): the
journal records the call and its result, a finished or paused chat replays it without asking
the server again, and a call cut off by a killed process is rerun or put to the
``on_uncertain_tool`` policy as the tool's idempotency (the server's annotations, or
``register(idempotent=...)``) says."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import parley.mcp
from parley.durable import ChatPaused, ChatStore, PausingIO, UncertainCall, resume
from parley.exceptions import UncertainToolCallError
from parley.io import IOStream
from parley.testing import FakeLLMServer

from ..mcp._servers import pid_alive, wait_for
from . import mcp_chat
from .mcp_chat import ARGUMENTS, CHAT_ID, calls, marks
from .test_resume import ENV, ROOT

# The bound on the child's chat reaching the tool: Python, parley, the SDK and the MCP
# server starting on a loaded machine.
START = 60.0


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(responder=mcp_chat.respond) as s:
        yield s


async def _tool_steps(store: ChatStore) -> list[tuple[Any, Any]]:
    return [
        (start, result)
        for _, start, result in await store.a_steps(CHAT_ID)
        if isinstance(start, dict) and "tool" in start
    ]


async def test_the_journal_records_the_call_and_a_finished_chat_replays_it(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.reset()
    store = ChatStore(tmp_path / "chats.db")
    async with mcp_chat.mcp_chat(server.config_list(), tmp_path, "append_note") as chat:
        first = await chat.run(store)
    assert [m["content"] for m in first.chat_history][-2:] == ["noted hi", "TERMINATE"]
    assert calls(tmp_path, "append_note") == 1
    [(start, result)] = await _tool_steps(store)
    assert start == {"tool": "append_note", "call_id": "call_1", "arguments": ARGUMENTS}
    success, reply = result
    assert success is True
    assert (reply["name"], reply["content"]) == ("append_note", "noted hi")

    sent = len(server.received)
    async with mcp_chat.mcp_chat(server.config_list(), tmp_path, "append_note") as chat:
        again = await chat.resume(store)
    assert again.chat_history == first.chat_history
    assert again.summary == first.summary
    assert calls(tmp_path, "append_note") == 1  # replayed: the server was not asked again
    assert len(server.received) == sent


async def test_a_paused_chat_replays_the_call_when_it_goes_on(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.reset()
    store = ChatStore(tmp_path / "chats.db")
    async with mcp_chat.mcp_chat(
        server.config_list(), tmp_path, "append_note", human_input_mode="TERMINATE"
    ) as chat:
        with IOStream.set_default(PausingIO()), pytest.raises(ChatPaused):
            await chat.run(store)
    assert calls(tmp_path, "append_note") == 1
    await store.a_answer(CHAT_ID, "exit")

    sent = len(server.received)
    async with mcp_chat.mcp_chat(
        server.config_list(), tmp_path, "append_note", human_input_mode="TERMINATE"
    ) as chat:

        def resume_sync() -> Any:  # the blocking API, its chat on parley's own loop
            with IOStream.set_default(PausingIO()):
                return resume(CHAT_ID, store=store, sender=chat.user, recipient=chat.assistant)

        result = await asyncio.to_thread(resume_sync)
    assert [m["content"] for m in result.chat_history][-2:] == ["noted hi", "TERMINATE"]
    assert calls(tmp_path, "append_note") == 1
    assert len(server.received) == sent
    assert await store.a_status(CHAT_ID) == "done"


def _kill_mid_call(server: FakeLLMServer, tmp: Path, tool: str, idempotent: Any) -> None:
    """Run the chat in a child process and SIGKILL it while the server runs ``tool``."""
    hold = marks(tmp) / "hold"
    hold.touch()
    child = subprocess.Popen(
        [
            *(sys.executable, "-m", "tests.durable.mcp_chat", json.dumps(server.config_list())),
            *(str(tmp), tool, json.dumps(idempotent)),
        ],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    mcp_server = 0
    try:

        def running() -> bool:
            if child.poll() is not None:
                assert child.stderr is not None
                raise AssertionError(f"the chat ended first: {child.stderr.read()[-2000:]!r}")
            return calls(tmp, tool) == 1

        wait_for(running, START, f"the chat to call {tool}")
        mcp_server = int((marks(tmp) / f"{tool}-started").read_text())
        child.send_signal(signal.SIGKILL)
        assert child.wait(START) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(START)
        assert child.stderr is not None
        child.stderr.close()
        hold.unlink()
        # Its client gone, the server ends once the held call returns.
        if mcp_server:
            try:
                wait_for(lambda: not pid_alive(mcp_server), START, "the old MCP server to end")
            finally:
                if pid_alive(mcp_server):
                    os.kill(mcp_server, signal.SIGKILL)


async def _killed_mid_call(
    server: FakeLLMServer, tmp: Path, tool: str, idempotent: Any
) -> ChatStore:
    """The store of a chat killed while ``tool`` ran: its call started, never finished."""
    server.reset()
    _kill_mid_call(server, tmp, tool, idempotent)
    store = ChatStore(tmp / "chats.db")
    [(start, result)] = await _tool_steps(store)
    assert start["tool"] == tool
    assert result is None
    return store


@pytest.mark.parametrize(
    ("tool", "idempotent"),
    [
        ("append_note", None),  # the server says nothing: not idempotent (MCP's default)
        ("save_note", False),  # the server says idempotent; the registration says not
    ],
)
async def test_a_non_idempotent_mcp_call_cut_off_goes_to_the_policy(
    server: FakeLLMServer, tmp_path: Path, tool: str, idempotent: Any
) -> None:
    store = await _killed_mid_call(server, tmp_path, tool, idempotent)

    async with mcp_chat.mcp_chat(server.config_list(), tmp_path, tool, idempotent) as chat:
        with pytest.raises(UncertainToolCallError, match=repr(tool)) as info:
            await chat.resume(store)
    assert (info.value.tool, info.value.call_id, info.value.arguments) == (
        tool,
        "call_1",
        ARGUMENTS,
    )
    assert calls(tmp_path, tool) == 1

    asked: list[UncertainCall] = []

    def decide(call: UncertainCall) -> str:
        asked.append(call)
        return "the note is there"

    async with mcp_chat.mcp_chat(server.config_list(), tmp_path, tool, idempotent) as chat:
        resumed = await chat.resume(store, on_uncertain_tool=decide)
    assert [call.name for call in asked] == [tool]
    contents = [m["content"] for m in resumed.chat_history]
    assert contents[-2:] == ["the note is there", "TERMINATE"]
    assert calls(tmp_path, tool) == 1  # the policy's answer stood for the call

    async with mcp_chat.mcp_chat(server.config_list(), tmp_path, tool, idempotent) as chat:
        assert (await chat.resume(store)).chat_history == resumed.chat_history
    assert calls(tmp_path, tool) == 1


@pytest.mark.parametrize(
    ("tool", "idempotent"),
    [
        ("save_note", None),  # the server's idempotentHint
        ("append_note", ["append_note"]),  # the registration names it
    ],
)
async def test_an_idempotent_mcp_call_cut_off_runs_again(
    server: FakeLLMServer, tmp_path: Path, tool: str, idempotent: Any
) -> None:
    store = await _killed_mid_call(server, tmp_path, tool, idempotent)
    async with mcp_chat.mcp_chat(server.config_list(), tmp_path, tool, idempotent) as chat:
        result = await chat.resume(store)
    done = "saved hi" if tool == "save_note" else "noted hi"
    assert [m["content"] for m in result.chat_history][-2:] == [done, "TERMINATE"]
    assert calls(tmp_path, tool) == 2
    [(_, recorded)] = await _tool_steps(store)
    assert recorded[1]["content"] == done


async def test_idempotent_names_must_be_tools_the_servers_offer(tmp_path: Path) -> None:
    async with await parley.mcp.connect(mcp_chat.mcp_config(tmp_path)) as toolkit:
        user = parley.UserProxyAgent("user", code_execution_config=False)
        with pytest.raises(
            ValueError, match=r"idempotent= names tools no server offers: \['nope'\]"
        ):
            toolkit.register(executor=user, idempotent=["append_note", "nope"])
        with pytest.raises(TypeError, match=r"\['append_note'\]"):
            toolkit.register(executor=user, idempotent="append_note")
        assert user.function_map == {}  # refused before anything was registered
