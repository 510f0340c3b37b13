"""The MCP client over stdio, against the demo server (a FastMCP/MCPServer script) started by
the toolkit: a two-agent chat on the fake LLM calling MCP tools, errors, images, resources,
prompts, timeouts and cancellation, and no process left behind."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import parley
import parley.mcp
from parley.exceptions import MCPCallError, MCPConfigError, MCPToolNameError
from parley.testing import FakeLLMServer

from ._servers import make_pair, pid_alive, stdio_entry, tool_results, wait_for
from .demo_server import PIXEL

PIXEL_B64 = base64.b64encode(PIXEL).decode()


def config(**extra: Any) -> dict[str, Any]:
    return {"mcpServers": {"demo": stdio_entry(**extra)}}


async def test_chat_calls_mcp_tools_with_the_servers_schemas(fake_llm: FakeLLMServer) -> None:
    assistant, user = make_pair(fake_llm)
    async with await parley.mcp.connect(config()) as toolkit:
        names = toolkit.register(caller=assistant, executor=user, exclude=["slow"])
        assert "add" in names
        assert "slow" not in names
        fake_llm.add_reply(
            tool_calls=[
                {"name": "add", "arguments": {"a": 2, "b": 3}},
                {"name": "total", "arguments": {"items": [1, 2, 3], "unit": "km"}},
                {"name": "explode", "arguments": {"reason": "boom"}},
                {"name": "picture", "arguments": {}},
            ]
        )
        fake_llm.add_reply("TERMINATE")
        await user.a_initiate_chat(assistant, message="go", silent=True)
    first, second = fake_llm.requests
    schemas = {t["function"]["name"]: t["function"] for t in first["tools"]}
    listed = {t.name: t for t in toolkit.tools}
    # The schema the server declared reaches the model unchanged.
    assert schemas["total"]["parameters"] == dict(listed["total"].input_schema)
    assert schemas["total"]["parameters"]["properties"]["unit"]["enum"] == ["m", "km"]
    assert schemas["add"]["description"] == "Add two integers."
    added, total, exploded, picture = tool_results(second)
    assert added == "5"
    assert json.loads(total) == {"total": 6, "unit": "km"}
    assert exploded.startswith("Error: ")
    assert "exploded: boom" in exploded
    # The image reaches the model: noted in the result, sent in a user message after them.
    assert picture == "[image 1: sent in the user message after the results]"
    assert second["messages"][-1]["role"] == "user"
    assert fake_llm.received[1].image_urls == [f"data:image/png;base64,{PIXEL_B64}"]


async def test_prefix_include_and_collisions(fake_llm: FakeLLMServer) -> None:
    assistant, user = make_pair(fake_llm)

    def add(a: int) -> int:
        return a

    parley.register_function(add, caller=assistant, executor=user, description="mine")
    async with await parley.mcp.connect(config()) as toolkit:
        with pytest.raises(MCPToolNameError, match=r"demo\.add.*'add'.*agent 'assistant'"):
            toolkit.register(caller=assistant, executor=user)
        # Refused before anything was registered.
        assert [t["function"]["name"] for t in assistant.llm_config["tools"]] == ["add"]
        assert toolkit.register(
            caller=assistant, executor=user, prefix="demo_", include=["add"]
        ) == ["demo_add"]
        fake_llm.add_reply(tool_calls=[{"name": "demo_add", "arguments": {"a": 40, "b": 2}}])
        fake_llm.add_reply("TERMINATE")
        await user.a_initiate_chat(assistant, message="go", silent=True)
        assert tool_results(fake_llm.requests[1]) == ["42"]
        with pytest.raises(ValueError, match="nope"):
            toolkit.register(caller=assistant, include=["nope"])


async def test_resources_and_prompts(fake_llm: FakeLLMServer) -> None:
    assistant, user = make_pair(fake_llm)
    async with await parley.mcp.connect(config()) as toolkit:
        assert await toolkit.list_resources() == ["notes://today"]
        assert await toolkit.read_resource("notes://today") == "buy milk"
        assert await toolkit.list_prompts() == ["review"]
        text = await toolkit.get_prompt("review", {"language": "Go", "code": "x := 1"})
        assert text == "Review this Go code:\nx := 1"
        toolkit.register(caller=assistant, executor=user, include=[], resources_as_tools=True)
        fake_llm.add_reply(
            tool_calls=[
                {"name": "read_resource", "arguments": {"uri": "notes://today"}},
                {
                    "name": "get_prompt",
                    "arguments": {"name": "review", "arguments": {"language": "C", "code": ";"}},
                },
                {"name": "read_resource", "arguments": {"uri": "notes://missing"}},
            ]
        )
        fake_llm.add_reply("TERMINATE")
        await user.a_initiate_chat(assistant, message="go", silent=True)
    read, prompt, missing = tool_results(fake_llm.requests[1])
    assert read == "buy milk"
    assert prompt == "Review this C code:\n;"
    assert missing.startswith("Error: ")
    assert "notes://missing" in missing


async def test_minimal_environment_and_config_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARLEY_TEST_SECRET", "do-not-leak")
    async with await parley.mcp.connect(config(env={"GREETING": "hi"})) as toolkit:
        assert await toolkit.call_tool("getenv", {"name": "GREETING"}) == "hi"
        assert await toolkit.call_tool("getenv", {"name": "PARLEY_TEST_SECRET"}) == "<unset>"
        assert await toolkit.call_tool("getenv", {"name": "PATH"}) == os.environ["PATH"]


async def test_stdio_child_is_gone_after_close() -> None:
    toolkit = await parley.mcp.connect(config())
    pid = int(await toolkit.call_tool("pid"))
    assert pid_alive(pid)
    await toolkit.aclose()
    wait_for(lambda: not pid_alive(pid), what="the server process to end")


def test_stdio_child_is_gone_when_its_owner_dies(tmp_path: Path) -> None:
    owner = textwrap.dedent(
        f"""
        import asyncio, sys, parley.mcp
        async def main():
            toolkit = await parley.mcp.connect({config()!r})
            print(await toolkit.call_tool("pid"), flush=True)
            await asyncio.sleep(3600)
        asyncio.run(main())
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(parley.__file__).parents[1])}
    process = subprocess.Popen([sys.executable, "-c", owner], stdout=subprocess.PIPE, env=env)
    try:
        assert process.stdout is not None
        pid = int(process.stdout.readline())
        assert pid_alive(pid)
        process.kill()  # no cleanup runs: SIGKILL
        process.wait(10)
        wait_for(lambda: not pid_alive(pid), what="the orphaned server to exit")
    finally:
        process.kill()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


async def test_timeout_and_cancellation_reach_the_server(tmp_path: Path) -> None:
    marks = tmp_path
    async with await parley.mcp.connect(
        config(env={"MARK_DIR": str(marks)}, timeout=0.5)
    ) as toolkit:
        with pytest.raises(MCPCallError, match=r"'slow': no result within 0.5s"):
            await toolkit.call_tool("slow", {"seconds": 30})
        # The SDK told the server (notifications/cancelled): the tool's task was cancelled.
        await asyncio.to_thread(
            wait_for, lambda: (marks / "slow-cancelled").exists(), 15.0, "the server to cancel"
        )
        assert await toolkit.call_tool("add", {"a": 1}) == "2"  # the session goes on


async def test_cancelling_a_chat_cancels_the_call(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    assistant, user = make_pair(fake_llm)
    async with await parley.mcp.connect(config(env={"MARK_DIR": str(tmp_path)})) as toolkit:
        toolkit.register(caller=assistant, executor=user)
        fake_llm.add_reply(tool_calls=[{"name": "slow", "arguments": {"seconds": 60}}])
        chat = asyncio.create_task(user.a_initiate_chat(assistant, message="go", silent=True))
        await asyncio.to_thread(
            wait_for, lambda: (tmp_path / "slow-started").exists(), 15.0, "the slow tool to start"
        )
        chat.cancel()
        with pytest.raises(asyncio.CancelledError):
            await chat
        await asyncio.to_thread(
            wait_for, lambda: (tmp_path / "slow-cancelled").exists(), 15.0, "the server to cancel"
        )


async def test_dead_stdio_server_is_an_error_then_a_new_process(fake_llm: FakeLLMServer) -> None:
    assistant, user = make_pair(fake_llm)
    async with await parley.mcp.connect(config()) as toolkit:
        toolkit.register(caller=assistant, executor=user)
        first = int(await toolkit.call_tool("pid"))
        os.kill(first, 9)
        wait_for(lambda: not pid_alive(first), what="the server to die")
        fake_llm.add_reply(tool_calls=[{"name": "pid", "arguments": {}}])
        fake_llm.add_reply(tool_calls=[{"name": "pid", "arguments": {}}])
        fake_llm.add_reply("TERMINATE")
        await user.a_initiate_chat(assistant, message="go", silent=True)
        (lost,) = tool_results(fake_llm.requests[1])
        assert lost.startswith("Error: ")
        assert "connection was lost" in lost
        second = tool_results(fake_llm.requests[2])[-1]
        assert int(second) != first
        assert pid_alive(int(second))


def test_config_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(MCPConfigError, match=r"'demo'.*'command' \(stdio\) or 'url'"):
        parley.mcp.load_config({"mcpServers": {"demo": {"args": []}}})
    with pytest.raises(MCPConfigError, match="unknown transport 'ws'"):
        parley.mcp.load_config({"mcpServers": {"x": {"url": "http://a/b", "type": "ws"}}})
    with pytest.raises(MCPConfigError, match="timeout"):
        parley.mcp.load_config({"mcpServers": {"x": {"url": "http://a/b", "timeout": -1}}})
    path = tmp_path / "mcp.json"
    original = {
        "mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "server"], "env": {"TOKEN": "secret"}},
            "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer k"}},
            "old": {"url": "http://127.0.0.1:1/sse", "transport": "sse"},
            "off": {"command": "x", "disabled": True},
        }
    }
    path.write_text(json.dumps(original))
    fs, web, old = parley.mcp.load_config(path)
    assert (fs.transport, fs.args, dict(fs.env)) == ("stdio", ("-y", "server"), {"TOKEN": "secret"})
    assert (web.transport, old.transport) == ("http", "sse")
    assert "secret" not in repr(fs)
    assert "Bearer" not in repr(web)
    copy = json.loads(json.dumps(original))
    parley.mcp.load_config(copy)
    assert copy == original
