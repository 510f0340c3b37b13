"""The MCP client over streamable HTTP on loopback: a chat calling the server's tools, a
server killed mid-call and restarted (the next call reconnects), a session the user opened."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

import parley.mcp
from parley.exceptions import MCPCallError
from parley.testing import FakeLLMServer

from ._servers import http_server, make_pair, tool_results, wait_for


async def test_chat_over_http_and_a_restart_mid_call(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    assistant, user = make_pair(fake_llm)
    with http_server(env={"MARK_DIR": str(tmp_path)}) as server:
        config = {"mcpServers": {"web": {"url": server.url, "timeout": 20}}}
        async with await parley.mcp.connect(config) as toolkit:
            toolkit.register(caller=assistant, executor=user, prefix="web_")
            fake_llm.add_reply(tool_calls=[{"name": "web_add", "arguments": {"a": 1, "b": 2}}])
            fake_llm.add_reply(tool_calls=[{"name": "web_slow", "arguments": {"seconds": 60}}])
            restarted = threading.Event()
            answers = iter(
                [{"tool_calls": [{"name": "web_add", "arguments": {"a": 5}}]}, "TERMINATE"]
            )

            async def after_the_restart(body: dict[str, Any]) -> Any:
                # The model's next step waits for the server to be back, as a slower model would.
                await asyncio.to_thread(restarted.wait, 60)
                return next(answers)

            fake_llm.responder = after_the_restart
            chat = asyncio.create_task(user.a_initiate_chat(assistant, message="go", silent=True))
            await asyncio.to_thread(
                wait_for, lambda: (tmp_path / "slow-started").exists(), 20.0, "the slow call"
            )
            server.kill()  # mid-call
            await asyncio.to_thread(server.start)
            restarted.set()
            await asyncio.wait_for(chat, 60)
        assert tool_results(fake_llm.requests[1]) == ["3"]
        killed = tool_results(fake_llm.requests[2])[-1]
        assert killed.startswith("Error: ")
        assert "'slow'" in killed
        assert tool_results(fake_llm.requests[3])[-1] == "6"  # a new session on the new server


async def test_restart_between_calls_reconnects_once() -> None:
    with http_server() as server:
        async with await parley.mcp.connect({"mcpServers": {"web": {"url": server.url}}}) as kit:
            assert await kit.call_tool("add", {"a": 1}) == "2"
            server.kill()
            await asyncio.to_thread(server.start)
            # The new server does not know the old session: the call never ran, so it is
            # sent again on a new session.
            assert await kit.call_tool("add", {"a": 2}) == "3"
            server.kill()
            with pytest.raises(MCPCallError, match="cannot connect"):
                await kit.call_tool("add", {"a": 3})


async def test_a_session_the_user_opened() -> None:
    with http_server() as server:
        async with (
            streamable_http_client(server.url) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            kit = await parley.mcp.create_toolkit(session, name="mine")
            assert await kit.call_tool("add", {"a": 40, "b": 2}) == "42"
            assert await kit.read_resource("notes://today") == "buy milk"
            await kit.aclose()
            # The user's session is theirs: still open.
            assert (await session.call_tool("add", {"a": 1})).structured_content == {"result": 2}
