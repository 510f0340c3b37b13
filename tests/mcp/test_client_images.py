"""Images in MCP tool results reach the model as images: the demo server (the SDK's
``MCPServer``, over stdio) returns a picture with the SDK's ``Image`` helper; a chat on the
fake LLM, through the real openai and anthropic SDKs, sends it the way each API takes it.
Audio and images of types no model API takes stay described as text; text stays text."""

from __future__ import annotations

import base64
from typing import Any

import parley
import parley.mcp
from parley import AssistantAgent, UserProxyAgent
from parley.testing import FakeLLMServer

from ._servers import stdio_entry
from .demo_server import PIXEL

PIXEL_URI = f"data:image/png;base64,{base64.b64encode(PIXEL).decode()}"
IMAGE = {"type": "image_url", "image_url": {"url": PIXEL_URI}}


def config() -> dict[str, Any]:
    return {"mcpServers": {"demo": stdio_entry()}}


async def test_call_tool_returns_image_parts_and_text_as_before() -> None:
    async with await parley.mcp.connect(config()) as toolkit:
        assert await toolkit.call_tool("picture") == [IMAGE]
        assert await toolkit.call_tool("album") == [
            {"type": "text", "text": "the pixel:"},
            IMAGE,
            {"type": "text", "text": "[audio: audio/wav, 12 bytes]"},
            {"type": "text", "text": "[image: image/svg+xml, 41 bytes]"},
        ]
        assert await toolkit.call_tool("add", {"a": 1, "b": 2}) == "3"


async def chat(llm_config: dict[str, Any], fake_llm: FakeLLMServer) -> Any:
    assistant = AssistantAgent("assistant", llm_config={**llm_config, "cache_seed": None})
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    async with await parley.mcp.connect(config()) as toolkit:
        toolkit.register(caller=assistant, executor=user, include=["album", "add"])
        fake_llm.add_reply(
            tool_calls=[
                {"name": "album", "arguments": {}, "id": "call_1"},
                {"name": "add", "arguments": {"a": 2, "b": 3}, "id": "call_2"},
            ]
        )
        fake_llm.add_reply("TERMINATE")
        result = await user.a_initiate_chat(assistant, message="go", silent=True)
    request = fake_llm.received[1]
    assert request.image_urls == [PIXEL_URI]
    return result, request


async def test_an_mcp_image_reaches_an_openai_model_after_the_results(
    fake_llm: FakeLLMServer,
) -> None:
    result, request = await chat(fake_llm.llm_config(), fake_llm)
    messages = request.json["messages"]
    assert messages[-3:] == [
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "the pixel:\n\n[image 1: sent in the user message after the results]"
            "\n\n[audio: audio/wav, 12 bytes]\n\n[image: image/svg+xml, 41 bytes]",
        },
        {"role": "tool", "tool_call_id": "call_2", "content": "5"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "The image returned by the tool call call_1:"},
                IMAGE,
            ],
        },
    ]
    # The history keeps the result's parts.
    assert result.chat_history[2]["tool_responses"][0]["content"][1] == IMAGE


async def test_an_mcp_image_reaches_an_anthropic_model_in_its_tool_result(
    fake_llm: FakeLLMServer,
) -> None:
    config_list = fake_llm.config_list("claude-sonnet-4-6", api_type="anthropic")
    _, request = await chat({"config_list": config_list}, fake_llm)
    first, second = request.json["messages"][-1]["content"]
    assert first["type"] == "tool_result"
    assert first["tool_use_id"] == "call_1"
    assert [b["type"] for b in first["content"]] == ["text", "image", "text", "text"]
    assert first["content"][1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PIXEL).decode(),
    }
    assert second == {"type": "tool_result", "tool_use_id": "call_2", "content": "5"}
