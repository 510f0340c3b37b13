"""Usage and budgets of a chat whose executor runs a real MCP server's tools (the demo server
over stdio) are those of the same chat with Python tools: the same calls charged to the same
agents, and a budget stops the chat at the same step, the tool run as often."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parley import AssistantAgent, UserProxyAgent
from parley.testing import FakeLLMServer
from parley.usage import Budget

from ..mcp.twins import KINDS, note_tools
from .test_budgets import COST, USAGE, llm

NOTE = {"name": "append_note", "arguments": {"text": "hi"}, "id": "call_1"}


async def _chat(kind: str, fake_llm: FakeLLMServer, tmp: Path, **chat: Any) -> tuple[Any, int]:
    """The chat's result and how often the tool ran: the model calls the tool at every turn."""
    fake_llm.reset()
    assistant = AssistantAgent("assistant", llm_config=llm(fake_llm))
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    async with note_tools(kind, assistant, user, tmp / kind) as calls:
        for _ in range(5):
            fake_llm.add_reply(tool_calls=[NOTE], usage=USAGE)
        result = await user.a_initiate_chat(assistant, message="note it", silent=True, **chat)
        return result, calls()


def _seen(result: Any) -> list[tuple[Any, Any]]:
    return [(m.get("role"), m.get("content")) for m in result.chat_history]


@pytest.mark.parametrize(
    ("budget", "reason", "runs"),
    [
        (Budget(max_llm_calls=1), "budget:llm_calls", 0),  # ends before the tool's turn
        (Budget(max_llm_calls=3), "budget:llm_calls", 2),
        (Budget(max_cost=COST * 1.5), "budget:cost", 1),
    ],
)
async def test_a_budget_stops_a_chat_of_mcp_calls_as_one_of_python_calls(
    fake_llm: FakeLLMServer, tmp_path: Path, budget: Budget, reason: str, runs: int
) -> None:
    outcomes = {}
    for kind in KINDS:
        result, calls = await _chat(kind, fake_llm, tmp_path, budget=budget)
        assert result.termination_reason == reason
        assert calls == runs
        outcomes[kind] = (_seen(result), result.cost, result.usage.summary())
    assert outcomes["mcp"] == outcomes["python"]


@pytest.mark.parametrize("kind", KINDS)
async def test_usage_counts_the_calls_around_the_tool(
    kind: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    result, calls = await _chat(kind, fake_llm, tmp_path, max_turns=3)
    assert calls == 2  # the user's two turns ran the tool
    usage = result.usage
    assert usage.llm_calls == 3
    assert {p: u.llm_calls for p, u in usage.by_purpose().items()} == {"reply": 3}
    assert {a: u.llm_calls for a, u in usage.by_agent().items()} == {"assistant": 3}
    assert usage.cost == pytest.approx(3 * COST)
    assert [m["content"] for m in result.chat_history if m.get("role") == "tool"] == [
        "noted hi",
        "noted hi",
    ]
