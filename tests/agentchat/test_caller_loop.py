"""Where user code runs in an async chat, and what a cancelled chat leaves behind.

An async chat runs on the caller's event loop: async tools, reply functions and hooks see that
loop, so user code can share loop-bound objects (sessions, locks, queues) with them. A
cancelled chat stops at once and leaves every agent's history and counters consistent.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

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
    executor.register_hook("process_all_messages_before_reply", hook)
    fake_llm.add_reply(tool_calls=[{"name": "put", "arguments": {"word": "hello"}}])
    fake_llm.add_reply("TERMINATE")

    await executor.a_initiate_chat(caller, message="queue a word", max_turns=2, silent=True)

    assert await asyncio.wait_for(queue.get(), 1) == "hello"
    assert seen == {"tool": loop, "reply": loop, "hook": loop}


async def test_a_cancelled_chat_stops_at_once_with_consistent_histories(
    fake_llm: FakeLLMServer,
) -> None:
    a = ConversableAgent(
        "a", llm_config={"config_list": fake_llm.config_list()}, human_input_mode="NEVER"
    )
    b = ConversableAgent(
        "b", llm_config={"config_list": fake_llm.config_list()}, human_input_mode="NEVER"
    )
    fake_llm.add_reply("first answer")
    fake_llm.add_reply("second answer")
    fake_llm.add_reply("never seen", delay=30)

    chat = asyncio.create_task(a.a_initiate_chat(b, message="start", max_turns=5, silent=True))
    while len(fake_llm.requests) < 3:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)  # the third request is in flight
    started = time.monotonic()
    chat.cancel()
    try:
        await chat
    except asyncio.CancelledError:
        pass
    assert time.monotonic() - started < 0.5

    # Every message completed so far is in both histories, in the same order; nothing of
    # the cancelled request's answer, nothing half-appended.
    sent = [m["content"] for m in a.chat_messages[b]]
    received = [m["content"] for m in b.chat_messages[a]]
    assert sent == received == ["start", "first answer", "second answer"]

    # The agents carry on: a new chat works.
    fake_llm.add_reply("after the cancel")
    result = await a.a_initiate_chat(b, message="again", max_turns=1, silent=True)
    assert [m["content"] for m in result.chat_history] == ["again", "after the cancel"]
