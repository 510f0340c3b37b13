"""The fake server reads images inside tool results (so a test sees them reach the model) and
refuses the tool results each API refuses, through the providers' own SDKs."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest

from parley.testing import FakeLLMServer

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
    "rkJggg=="
)
PIXEL = f"data:image/png;base64,{PNG}"
CALL = {"type": "tool_use", "id": "t1", "name": "chart", "input": {}}
TOOL = {"name": "chart", "description": "a chart", "input_schema": {"type": "object"}}


def claude_with_result(server: FakeLLMServer, content: Any) -> Any:
    with anthropic.Anthropic(api_key="k", base_url=server.url, max_retries=0) as claude:
        return claude.messages.create(
            model="claude-x",
            max_tokens=10,
            tools=[TOOL],  # type: ignore[list-item]
            messages=[
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [CALL]},  # type: ignore[list-item]
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": content}],
                },
            ],
        )


def test_anthropic_tool_result_images_reach_the_responder(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("seen")
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    claude_with_result(fake_llm, [{"type": "text", "text": "chart:"}, image])
    request = fake_llm.received[-1]
    assert request.image_urls == [PIXEL]
    assert request.chat["messages"][-2] == {
        "role": "tool",
        "tool_call_id": "t1",
        "content": "chart:",
    }


def test_anthropic_refuses_a_block_a_tool_result_cannot_hold(fake_llm: FakeLLMServer) -> None:
    with pytest.raises(anthropic.BadRequestError, match="tool_use"):
        claude_with_result(fake_llm, [{"type": "tool_use", "id": "x", "name": "n", "input": {}}])


def responses_with_output(server: FakeLLMServer, output: Any) -> Any:
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    return client.responses.create(
        model="gpt-4o",
        input=[
            {"role": "user", "content": "go"},
            {"type": "function_call", "call_id": "c1", "name": "chart", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": output},
        ],
    )


def test_responses_output_images_reach_the_responder(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("seen")
    responses_with_output(
        fake_llm,
        [{"type": "input_text", "text": "chart:"}, {"type": "input_image", "image_url": PIXEL}],
    )
    request = fake_llm.received[-1]
    assert request.image_urls == [PIXEL]
    assert request.chat["messages"][-2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "chart:",
    }
    assert request.chat["messages"][-1]["role"] == "user"


def test_responses_refuses_an_output_item_of_another_type(fake_llm: FakeLLMServer) -> None:
    with pytest.raises(openai.BadRequestError, match="output_text"):
        responses_with_output(fake_llm, [{"type": "output_text", "text": "no"}])
