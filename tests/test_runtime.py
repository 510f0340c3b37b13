"""parley._core.runtime: where requests run, what a cancellation reaches, what a closing loop and a
fork leave behind. All against a real FakeLLMServer through the real openai client."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import os
import time
import warnings
from typing import Any

import openai
import pytest

from parley import ConversableAgent, OpenAIWrapper
from parley._core.runtime import (
    after_fork,
    is_waiting_for_runner,
    run_in_thread,
    run_sync,
    runner_loop,
    to_thread,
)
from parley.testing import FakeLLMServer

HI = [{"role": "user", "content": "hi"}]


def _agent(name: str, server: FakeLLMServer) -> ConversableAgent:
    return ConversableAgent(name, llm_config=server.llm_config(), human_input_mode="NEVER")


async def test_cancelling_an_async_chat_aborts_its_request_on_the_wire(
    fake_llm: FakeLLMServer,
) -> None:
    a, b = _agent("a", fake_llm), _agent("b", fake_llm)
    fake_llm.add_reply("first answer")
    fake_llm.add_reply("second answer")
    fake_llm.add_reply("never seen", delay=30)

    chat = asyncio.create_task(a.a_initiate_chat(b, message="start", max_turns=5, silent=True))
    while len(fake_llm.requests) < 3:  # noqa: ASYNC110 - the server lives in another thread
        await asyncio.sleep(0.01)
    started = time.monotonic()
    chat.cancel()
    with pytest.raises(asyncio.CancelledError):
        await chat
    assert time.monotonic() - started < 10  # not after the delayed answer's 30 s

    # The server saw the client close the connection of the request it was delaying.
    (abandoned,) = await asyncio.to_thread(fake_llm.wait_for_abandoned, 1)
    assert abandoned.json == fake_llm.requests[2]
    # Histories hold the messages completed before the cancel, in both agents, nothing more.
    sent = [m["content"] for m in a.chat_messages[b]]
    assert sent == [m["content"] for m in b.chat_messages[a]]
    assert sent == ["start", "first answer", "second answer"]


async def test_a_create_sends_its_request_from_the_callers_loop(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("hello")
    seen: list[asyncio.AbstractEventLoop] = []

    async def on_request(request: Any) -> None:
        seen.append(asyncio.get_running_loop())

    http_client = openai.DefaultAsyncHttpxClient(event_hooks={"request": [on_request]})
    try:
        wrapper = OpenAIWrapper(config_list=fake_llm.config_list(http_client=http_client))
        response = await wrapper.a_create(messages=HI)
    finally:
        await http_client.aclose()
    assert response.choices[0].message.content == "hello"
    assert seen == [asyncio.get_running_loop()]


def test_a_loops_connections_are_closed_when_it_shuts_down(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda request: "hi"
    wrapper = OpenAIWrapper(config_list=fake_llm.config_list())

    async def chat() -> None:
        await asyncio.gather(*(wrapper.a_create(messages=HI) for _ in range(3)))
        assert fake_llm.open_connections >= 1  # kept alive for the next request

    for _ in range(3):  # a fresh loop, a fresh pool, each time
        asyncio.run(chat())
        assert _eventually(lambda: fake_llm.open_connections == 0)
    gc.collect()  # an unclosed transport would warn here (an error in this suite)


def test_a_loop_closed_without_shutting_down_is_let_go(
    fake_llm: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Closing a connection needs its loop: one closed without shutdown_asyncgens() leaves its
    connections open (and says so), without errors or warnings later; the next loop gets
    clients of its own."""
    fake_llm.responder = lambda request: "hi"
    wrapper = OpenAIWrapper(config_list=fake_llm.config_list())
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(wrapper.a_create(messages=HI))
    finally:
        loop.close()  # without loop.shutdown_asyncgens()
    assert asyncio.run(wrapper.a_create(messages=HI)).choices[0].message.content == "hi"
    del loop
    gc.collect()  # nothing of the closed loop's is collected: no warning, no stray task
    assert "shutdown_asyncgens" in caplog.text


def test_sync_calls_and_the_cache_work_in_a_forked_child(
    fake_llm: FakeLLMServer, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fake_llm.responder = lambda request: request["messages"][-1]["content"].upper()
    wrapper = OpenAIWrapper(config_list=fake_llm.config_list(), cache_seed=5)
    # The runner loop, a connection, the cache's thread and database exist before the fork.
    wrapper.create(messages=HI)
    calls: list[int] = []
    after_fork(lambda: calls.append(os.getpid()))
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # forking with threads running
        pid = os.fork()
    if pid == 0:  # the child: report and leave without running the parent's exit handlers
        try:
            hit = wrapper.create(messages=HI).choices[0].message.content
            fresh = wrapper.create(messages=[{"role": "user", "content": "child"}])
            ok = (hit, fresh.choices[0].message.content, calls) == ("HI", "CHILD", [os.getpid()])
            os.write(write_end, b"ok" if ok else b"wrong")
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        assert os.read(read_end, 16) == b"ok"
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    assert calls == []  # only in the child
    assert [r["messages"][-1]["content"] for r in fake_llm.requests] == ["hi", "child"]
    # The parent's runner and cache are untouched.
    assert run_sync(_answer()) == 42
    assert wrapper.create(messages=HI).choices[0].message.content == "HI"
    assert len(fake_llm.requests) == 2


async def _answer() -> int:
    return 42


def _eventually(condition: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


async def test_a_worker_thread_sees_the_callers_context_variables() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("test_var", default="unset")
    var.set("caller")

    def read_and_write() -> str:
        seen = var.get()
        var.set("worker")  # in the worker's copy: the caller's value stays
        return seen

    assert await run_in_thread(read_and_write) == "caller"
    assert await to_thread(read_and_write) == "caller"
    assert var.get() == "caller"


async def test_a_loop_blocked_in_a_sync_call_is_known_to_be_waiting() -> None:
    # A notebook cell's sync call blocks the cell's running loop until the runner is done.
    here = asyncio.get_running_loop()
    assert not is_waiting_for_runner(here)

    async def seen_from_the_runner() -> tuple[bool, bool]:
        return is_waiting_for_runner(here), is_waiting_for_runner(runner_loop())

    assert run_sync(seen_from_the_runner()) == (True, False)
    assert not is_waiting_for_runner(here)
    # Outside a sync call (and from a thread with no loop) nothing is marked.
    assert await asyncio.to_thread(run_sync, seen_from_the_runner()) == (False, False)
