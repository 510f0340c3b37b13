"""``parley mcp serve --transport http``: streamable HTTP on loopback behind a bearer token."""

from __future__ import annotations

import re
import socket

import anyio
import httpx2
import pytest

from parley.testing import FakeLLMServer

from ._support import (
    WAIT,
    HttpServer,
    first_line,
    http_session,
    run_serve,
    server_env,
    serving,
)

pytestmark = pytest.mark.timeout(240)

TOKEN = "test-token-5f2b9c"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def test_a_group_chat_over_http_with_the_token() -> None:
    with FakeLLMServer() as llm, HttpServer("team", llm, TOKEN) as server:
        llm.add_reply("Draft.")
        llm.add_reply("Final text.")
        progress: list[str | None] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(message)

        async with http_session(server.url, TOKEN) as session:
            with anyio.fail_after(WAIT):
                (tool,) = (await session.list_tools()).tools
                assert tool.name == "team"
                result = await session.call_tool(
                    "team", {"task": "Write."}, progress_callback=on_progress
                )
        assert result.content[0].text == "Final text."
        assert result.structured_content["messages"] == 3
        assert len(progress) == 3


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", f"Basic {TOKEN}"])
async def test_requests_without_the_token_get_401(authorization: str | None) -> None:
    with HttpServer("calculator", None, TOKEN) as server:
        headers = dict(HEADERS)
        if authorization is not None:
            headers["Authorization"] = authorization
        async with httpx2.AsyncClient(timeout=WAIT) as http:
            refused = await http.post(server.url, json=INITIALIZE, headers=headers)
            assert refused.status_code == 401
            accepted = await http.post(
                server.url, json=INITIALIZE, headers={**HEADERS, "Authorization": f"Bearer {TOKEN}"}
            )
            assert accepted.status_code == 200


async def test_the_sdk_client_calls_a_function_over_http() -> None:
    with HttpServer("calculator", None, TOKEN) as server:
        async with http_session(server.url, TOKEN) as session:
            with anyio.fail_after(WAIT):
                result = await session.call_tool("add", {"a": 1, "b": 2})
        assert result.content[0].text == "3"


def test_a_host_other_machines_reach_is_refused_without_the_flag() -> None:
    done = run_serve(
        "calculator",
        "--transport",
        "http",
        "--host",
        "0.0.0.0",
        "--port",
        "1",
        env=server_env(None),
    )
    assert done.returncode == 2
    assert "refusing to serve MCP on '0.0.0.0'" in done.stderr
    assert "--allow-remote" in done.stderr


def test_a_generated_token_is_printed_to_stderr() -> None:
    env = server_env(None)
    env.pop("PARLEY_MCP_TOKEN", None)
    with serving("calculator", "--transport", "http", "--port", "0", env=env) as process:
        line = first_line(process.stderr)  # the first thing the server says
        assert line.startswith("[parley] MCP bearer token")
        token = line.rsplit(": ", 1)[1].strip()
        assert len(token) >= 32


def test_port_0_serves_on_a_free_port_named_on_stderr() -> None:
    env = server_env(None, PARLEY_MCP_TOKEN=TOKEN)
    with serving("calculator", "--transport", "http", "--port", "0", env=env) as process:
        # The server names its URL once it accepts connections.
        line = first_line(process.stderr)
        match = re.fullmatch(r"\[parley\] MCP server \(streamable HTTP\) on (\S+)\n", line)
        assert match, line
        url = match.group(1)
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert url == f"http://127.0.0.1:{port}/mcp"
        assert port != 0

        async def add() -> str:
            async with http_session(url, TOKEN) as session:
                with anyio.fail_after(WAIT):
                    result = await session.call_tool("add", {"a": 20, "b": 22})
            return str(result.content[0].text)

        assert anyio.run(add) == "42"


def test_a_port_in_use_is_a_clear_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        env = server_env(None, PARLEY_MCP_TOKEN=TOKEN)
        done = run_serve("calculator", "--transport", "http", "--port", str(port), env=env)
    assert done.returncode == 1
    assert f"cannot serve MCP on 127.0.0.1:{port}" in done.stderr
