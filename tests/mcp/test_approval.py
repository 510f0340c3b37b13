"""MCP tools that require approval (``MCPToolkit.register(requires_approval=...)``), on the
demo server over stdio: the executor's human is asked about the named tools only, and a
rejected call never reaches the server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import parley.mcp
from parley import UserProxyAgent
from parley.agentchat import APPROVE, ReviewRequest
from parley.testing import FakeLLMServer

from ._servers import stdio_entry
from .test_client_stdio import make_pair, tool_results


async def test_only_the_named_tools_ask(fake_llm: FakeLLMServer) -> None:
    assistant, user = make_pair(fake_llm)
    asked: list[Any] = []
    answers = iter(["Not now.", APPROVE])

    def review(request: ReviewRequest) -> str:
        asked.append(request.tool_call)
        return next(answers)

    user.register_human_review(review)
    async with await parley.mcp.connect({"mcpServers": {"demo": stdio_entry()}}) as toolkit:
        names = toolkit.register(
            caller=assistant, executor=user, prefix="demo_", requires_approval=["slow"]
        )
        assert "demo_slow" in names
        fake_llm.add_reply(
            tool_calls=[
                {"name": "demo_slow", "arguments": {"seconds": 0}, "id": "call_1"},
                {"name": "demo_add", "arguments": {"a": 2, "b": 3}, "id": "call_2"},
            ]
        )
        fake_llm.add_reply(
            tool_calls=[{"name": "demo_slow", "arguments": {"seconds": 0}, "id": "call_3"}]
        )
        fake_llm.add_reply("TERMINATE")
        await user.a_initiate_chat(assistant, message="go", silent=True)

    # Asked about slow only (by its registered name), never about add.
    assert [(c.name, c.arguments, c.call_id) for c in asked] == [
        ("demo_slow", {"seconds": 0}, "call_1"),
        ("demo_slow", {"seconds": 0}, "call_3"),
    ]
    _, second, third = fake_llm.requests
    assert tool_results(second) == [
        "Error: the human rejected the call of demo_slow: Not now.",
        "5",
    ]
    assert tool_results(third)[-1] == "done"


async def test_the_rejected_call_does_not_reach_the_server(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    assistant, user = make_pair(fake_llm)
    user.register_human_review(lambda request: "no")
    entry = stdio_entry(env={"MARK_DIR": str(tmp_path)})
    async with await parley.mcp.connect({"mcpServers": {"demo": entry}}) as toolkit:
        toolkit.register(caller=assistant, executor=user, requires_approval=True)
        fake_llm.add_reply(tool_calls=[{"name": "slow", "arguments": {"seconds": 0}}])
        fake_llm.add_reply("TERMINATE")
        await user.a_initiate_chat(assistant, message="go", silent=True)
        # The session still works, and a direct call (no agent, no human) reaches the server.
        assert not (tmp_path / "slow-started").exists()
        assert await toolkit.call_tool("slow", {"seconds": 0}) == "done"
        assert (tmp_path / "slow-started").exists()
    assert tool_results(fake_llm.requests[1]) == ["Error: the human rejected the call of slow: no"]


async def test_requires_approval_names_are_checked() -> None:
    async with await parley.mcp.connect({"mcpServers": {"demo": stdio_entry()}}) as toolkit:
        user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
        with pytest.raises(
            ValueError, match=r"requires_approval= names tools no server offers: \['nope'\]"
        ):
            toolkit.register(executor=user, requires_approval=["add", "nope"])
        with pytest.raises(TypeError, match=r"write \['add'\]"):
            toolkit.register(executor=user, requires_approval="add")
        assert user.function_map == {}  # nothing registered by a refused call
