"""Where user code runs in an async chat: on the caller's event loop.

Async tools, reply functions and hooks see the loop that awaits the chat, so user code can share
loop-bound objects (sessions, locks, queues) with them; a blocking sync tool runs in a worker
thread and does not hold up a cancellation. (What a cancelled chat leaves behind is in
tests/test_runtime.py.)
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from parley import ConversableAgent
from parley.testing import FakeLLMServer


def _pair(server: FakeLLMServer) -> tuple[ConversableAgent, ConversableAgent]:
    caller = ConversableAgent(
        "caller",
        llm_config={"config_list": server.config_list()},
        human_input_mode="NEVER",
    )
    executor = ConversableAgent("executor", human_input_mode="NEVER", llm_config=False)
    return caller, executor


async def test_async_tools_replies_and_hooks_run_on_the_callers_loop(
    fake_llm: FakeLLMServer,
) -> None:
    loop = asyncio.get_running_loop()
    seen: dict[str, asyncio.AbstractEventLoop] = {}
    queue: asyncio.Queue[str] = asyncio.Queue()  # bound to this loop once used

    caller, executor = _pair(fake_llm)

    @executor.register_for_execution()
    @caller.register_for_llm(description="put a word on the caller's queue")
    async def put(word: str) -> str:
        seen["tool"] = asyncio.get_running_loop()
        await queue.put(word)
        return "queued"

    async def watch(recipient: Any, messages: Any, sender: Any, config: Any) -> tuple[bool, Any]:
        seen["reply"] = asyncio.get_running_loop()
        return False, None

    async def hook(messages: Any) -> Any:
        seen["hook"] = asyncio.get_running_loop()
        return messages

    executor.register_reply([ConversableAgent, None], watch)
    executor.register_hook("a_process_all_messages_before_reply", hook)
    fake_llm.add_reply(tool_calls=[{"name": "put", "arguments": {"word": "hello"}}])
    fake_llm.add_reply("TERMINATE")

    await executor.a_initiate_chat(caller, message="queue a word", max_turns=2, silent=True)

    assert await asyncio.wait_for(queue.get(), 1) == "hello"
    assert seen == {"tool": loop, "reply": loop, "hook": loop}


async def test_cancelling_a_chat_while_a_sync_tool_blocks_returns_at_once(
    fake_llm: FakeLLMServer,
) -> None:
    """A sync tool that never looks at its cancel token does not hold the cancellation up."""
    entered, release = threading.Event(), threading.Event()
    caller, executor = _pair(fake_llm)

    @executor.register_for_execution()
    @caller.register_for_llm(description="wait")
    def wait() -> str:
        entered.set()
        release.wait(120)
        return "done"

    fake_llm.add_reply(tool_calls=[{"name": "wait", "arguments": {}}])
    chat = asyncio.create_task(
        executor.a_initiate_chat(caller, message="go", max_turns=2, silent=True)
    )
    try:
        assert await asyncio.to_thread(entered.wait, 5)
        started = time.monotonic()
        chat.cancel()
        with pytest.raises(asyncio.CancelledError):
            await chat
        # Held up by the tool, the cancellation would wait until the finally releases it.
        assert time.monotonic() - started < 30
    finally:
        release.set()
