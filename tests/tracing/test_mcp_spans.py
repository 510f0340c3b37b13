"""A tool call of a real MCP server (the demo server over stdio) is traced as a Python
function's is: the same span tree and tool attributes, no secret in any span, and the server
receives the tool span's trace context (so its own spans join the chat's trace)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import parley.mcp
from parley import AssistantAgent, UserProxyAgent
from parley.testing import FakeLLMServer

from ..mcp._servers import stdio_entry
from ..mcp.twins import SECRET, note_tools
from .conftest import Traced

CALLS = [
    {"name": "append_note", "arguments": {"text": "hi"}, "id": "call_1"},
    {"name": "explode", "arguments": {"reason": "boom"}, "id": "call_2"},
]


def _agents(fake_llm: FakeLLMServer) -> tuple[AssistantAgent, UserProxyAgent]:
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    return assistant, user


async def _traced_chat(
    kind: str, fake_llm: FakeLLMServer, tmp: Path, traced: Traced
) -> tuple[list[str], dict[str, Any]]:
    """The chat's span tree and its tool spans by name."""
    traced.exporter.clear()
    assistant, user = _agents(fake_llm)
    async with note_tools(kind, assistant, user, tmp / kind):
        fake_llm.add_reply(tool_calls=CALLS)
        fake_llm.add_reply("TERMINATE")
        await user.a_initiate_chat(assistant, message="note it", silent=True)
    tools = {s.name: s for s in traced.spans() if s.name.startswith("execute_tool ")}
    return traced.outline(), tools


async def test_an_mcp_call_is_traced_like_a_python_one(
    fake_llm: FakeLLMServer, tmp_path: Path, traced_content: Traced
) -> None:
    python_tree, python = await _traced_chat("python", fake_llm, tmp_path, traced_content)
    mcp_tree, mcp = await _traced_chat("mcp", fake_llm, tmp_path, traced_content)
    assert mcp_tree == python_tree
    assert "      execute_tool append_note" in mcp_tree

    noted = mcp["execute_tool append_note"].attributes
    assert noted == python["execute_tool append_note"].attributes
    assert noted["gen_ai.tool.name"] == "append_note"
    assert noted["gen_ai.tool.call.id"] == "call_1"
    assert noted["gen_ai.agent.name"] == "user"
    assert json.loads(noted["gen_ai.tool.call.arguments"]) == {"text": "hi"}
    assert noted["gen_ai.tool.call.result"] == "noted hi"
    assert noted["parley.tool.success"] is True

    failed = mcp["execute_tool explode"]
    assert failed.attributes["parley.tool.success"] is False
    assert "exploded: boom" in failed.attributes["gen_ai.tool.call.result"]
    assert failed.status.status_code == python["execute_tool explode"].status.status_code
    assert failed.status.status_code.name == "ERROR"

    shown = json.dumps(
        [dict(s.attributes or {}) for s in traced_content.spans()]
        + [[dict(e.attributes or {}) for e in s.events] for s in traced_content.spans()]
    )
    assert SECRET not in shown
    assert fake_llm.config_list()[0]["api_key"] not in shown


async def test_without_capture_content_no_argument_or_result_is_shown(
    fake_llm: FakeLLMServer, tmp_path: Path, traced: Traced
) -> None:
    _, mcp = await _traced_chat("mcp", fake_llm, tmp_path, traced)
    noted = mcp["execute_tool append_note"].attributes
    assert noted["gen_ai.tool.name"] == "append_note"
    assert "gen_ai.tool.call.arguments" not in noted
    assert "gen_ai.tool.call.result" not in noted


async def test_the_server_gets_the_tool_spans_trace_context(
    fake_llm: FakeLLMServer, traced: Traced
) -> None:
    assistant, user = _agents(fake_llm)
    async with await parley.mcp.connect({"mcpServers": {"demo": stdio_entry()}}) as toolkit:
        toolkit.register(caller=assistant, executor=user, include=["traceparent"])
        fake_llm.add_reply(tool_calls=[{"name": "traceparent", "arguments": {}}])
        fake_llm.add_reply("TERMINATE")
        result = await user.a_initiate_chat(assistant, message="trace it", silent=True)
    received = result.chat_history[2]["content"]
    span = traced.one("execute_tool traceparent").context
    assert span is not None
    # W3C traceparent: version, trace id, parent span id, flags.
    _version, trace_id, parent_id, flags = received.split("-")
    assert (trace_id, parent_id) == (f"{span.trace_id:032x}", f"{span.span_id:016x}")
    assert int(flags, 16) & 1  # sampled
