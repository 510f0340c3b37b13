"""The MCP client over the older HTTP+SSE transport, against the demo server serving SSE on
loopback: the ``mcpServers`` entry's ``transport``/``type`` key picks it, its headers go with
every request, and a chat calls the server's tools through it."""

from __future__ import annotations

import asyncio
import json

import pytest

import parley.mcp
from parley.exceptions import MCPCallError
from parley.testing import FakeLLMServer

from ._servers import http_server, make_pair, tool_results

pytestmark = pytest.mark.timeout(180)


async def test_a_chat_calls_tools_over_sse_with_the_entrys_headers(
    fake_llm: FakeLLMServer,
) -> None:
    assistant, user = make_pair(fake_llm)
    with http_server(transport="sse") as server:
        entry = {"url": server.url, "transport": "sse", "headers": {"X-Team": "blue"}}
        async with await parley.mcp.connect({"mcpServers": {"old": entry}}) as toolkit:
            assert {"add", "total", "header"} <= {t.name for t in toolkit.tools}
            toolkit.register(caller=assistant, executor=user, prefix="old_")
            fake_llm.add_reply(
                tool_calls=[
                    {"name": "old_add", "arguments": {"a": 20, "b": 22}},
                    {"name": "old_total", "arguments": {"items": [1, 2], "unit": "km"}},
                    {"name": "old_header", "arguments": {"name": "x-team"}},
                    {"name": "old_explode", "arguments": {"reason": "sse"}},
                ]
            )
            fake_llm.add_reply("TERMINATE")
            await asyncio.wait_for(user.a_initiate_chat(assistant, message="go", silent=True), 60)
            assert await toolkit.read_resource("notes://today") == "buy milk"
    added, total, header, exploded = tool_results(fake_llm.requests[1])
    assert added == "42"
    assert json.loads(total) == {"total": 3, "unit": "km"}
    assert header == "blue"  # the entry's headers reached the server
    assert exploded.startswith("Error: ")
    assert "exploded: sse" in exploded


async def test_type_sse_spelling_and_a_server_that_is_not_there() -> None:
    with http_server(transport="sse") as server:
        entry = {"url": server.url, "type": "SSE", "timeout": 20}
        async with await parley.mcp.connect({"mcpServers": {"old": entry}}) as toolkit:
            assert await toolkit.call_tool("add", {"a": 1}) == "2"
        url = server.url
    # The server is gone: connecting fails with an error naming the server, not a hang.
    with pytest.raises(MCPCallError, match=r"'old'.*cannot connect"):
        await parley.mcp.connect({"mcpServers": {"old": {"url": url, "transport": "sse"}}})
