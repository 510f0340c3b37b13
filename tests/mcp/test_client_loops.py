"""Which event loop a connection lives on, seen from the user's side: ``connect_sync`` for a
script and for a notebook (sync chats inside a running loop), a toolkit from ``connect`` used
where its loop cannot serve it (an error that says why, never a hang), and a session the user
opened, used by an async chat and by a sync chat running in a worker thread."""

from __future__ import annotations

import asyncio
import sys

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

import parley.mcp
from parley.exceptions import MCPCallError
from parley.testing import FakeLLMServer

from ._servers import SCRIPT, make_pair, pid_alive, stdio_entry, tool_results, wait_for

pytestmark = pytest.mark.timeout(180)

CONFIG = {"mcpServers": {"demo": stdio_entry()}}
CHAT_BOUND = 60.0  # seconds a short chat may take on a loaded machine


def script_tool_calls(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(
        tool_calls=[
            {"name": "add", "arguments": {"a": 2, "b": 3}},
            {"name": "pid", "arguments": {}},
        ]
    )
    fake_llm.add_reply("TERMINATE")


def test_connect_sync_in_a_script(fake_llm: FakeLLMServer) -> None:
    assistant, user = make_pair(fake_llm)
    with parley.mcp.connect_sync(CONFIG) as toolkit:
        toolkit.register(caller=assistant, executor=user)
        script_tool_calls(fake_llm)
        user.initiate_chat(assistant, message="go", silent=True)
        added, pid = tool_results(fake_llm.requests[1])
        assert added == "5"
        assert pid_alive(int(pid))
        # The connections outlive an asyncio.run, and serve a coroutine on its loop too.
        assert asyncio.run(toolkit.call_tool("add", {"a": 9})) == "10"
    wait_for(lambda: not pid_alive(int(pid)), what="the server process to end")


async def test_sync_chats_inside_a_running_loop_as_in_a_notebook(fake_llm: FakeLLMServer) -> None:
    # A notebook cell runs on a loop that is already running, and calls the sync API from it.
    assistant, user = make_pair(fake_llm)
    toolkit = parley.mcp.connect_sync(CONFIG)
    try:
        toolkit.register(caller=assistant, executor=user)
        script_tool_calls(fake_llm)
        user.initiate_chat(assistant, message="go", silent=True)
        added, pid = tool_results(fake_llm.requests[1])
        assert added == "5"
        # An async call from this loop reaches the connection on parley's loop.
        assert await asyncio.wait_for(toolkit.call_tool("add", {"a": 1, "b": 1}), 30) == "2"
    finally:
        toolkit.close()
    await asyncio.to_thread(wait_for, lambda: not pid_alive(int(pid)), 15.0, "the server to end")


async def test_an_async_toolkit_in_a_sync_chat_on_its_loop_is_an_error_not_a_hang(
    fake_llm: FakeLLMServer,
) -> None:
    # ``await connect(...)`` in a notebook, then the sync ``initiate_chat``: the chat runs on
    # parley's loop while this one waits for it, so this loop cannot serve the call.
    assistant, user = make_pair(fake_llm)
    async with await parley.mcp.connect(CONFIG) as toolkit:
        toolkit.register(caller=assistant, executor=user)
        fake_llm.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 2}}])
        fake_llm.add_reply("TERMINATE")
        user.initiate_chat(assistant, message="go", silent=True)
        (refused,) = tool_results(fake_llm.requests[1])
        assert refused.startswith("Error: MCP server 'demo': tool 'add': ")
        assert "a_initiate_chat" in refused
        assert "connect_sync" in refused
        # The same chat through the async API works on this loop.
        fake_llm.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 2}}])
        fake_llm.add_reply("TERMINATE")
        await asyncio.wait_for(
            user.a_initiate_chat(assistant, message="again", silent=True), CHAT_BOUND
        )
        assert tool_results(fake_llm.requests[3]) == ["3"]
        with pytest.raises(MCPCallError, match="blocked"):
            toolkit.close()  # the sync close, from the loop it would need
        assert await toolkit.call_tool("add", {"a": 3}) == "4"  # still open


def test_a_toolkit_whose_loop_ended_says_so_and_left_nothing_running() -> None:
    async def open_one() -> tuple[parley.mcp.MCPToolkit, int]:
        toolkit = await parley.mcp.connect(CONFIG)
        return toolkit, int(await toolkit.call_tool("pid"))

    toolkit, pid = asyncio.run(open_one())
    # asyncio.run cancelled the connection's owner task as it ended: the server ended too.
    wait_for(lambda: not pid_alive(pid), what="the server process to end")
    with pytest.raises(MCPCallError, match="has ended"):
        asyncio.run(toolkit.call_tool("add", {"a": 1}))
    toolkit.close()  # nothing left to close: no error


async def test_a_session_the_user_opened_serves_async_and_sync_chats(
    fake_llm: FakeLLMServer,
) -> None:
    assistant, user = make_pair(fake_llm)
    params = StdioServerParameters(command=sys.executable, args=[SCRIPT, "stdio"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        toolkit = await parley.mcp.create_toolkit(session, name="mine")
        assert toolkit.servers == ["mine"]
        toolkit.register(caller=assistant, executor=user, prefix="mine_", include=["add", "pid"])
        fake_llm.add_reply(tool_calls=[{"name": "mine_add", "arguments": {"a": 40, "b": 2}}])
        fake_llm.add_reply("TERMINATE")
        await asyncio.wait_for(user.a_initiate_chat(assistant, message="go", silent=True), 60)
        assert tool_results(fake_llm.requests[1]) == ["42"]
        # A sync chat in a worker thread runs on parley's loop; its calls are served here, on
        # the loop the session belongs to (which is free: it awaits the thread).
        fake_llm.add_reply(tool_calls=[{"name": "mine_pid", "arguments": {}}])
        fake_llm.add_reply("TERMINATE")
        await asyncio.wait_for(
            asyncio.to_thread(user.initiate_chat, assistant, message="sync", silent=True),
            CHAT_BOUND,
        )
        (pid,) = tool_results(fake_llm.requests[3])
        await toolkit.aclose()
        # The session is the user's: still open, the same server process.
        answer = await session.call_tool("pid", {})
        assert answer.structured_content == {"result": int(pid)}
