"""AnthropicClient through the anthropic SDK against the fake server's Messages API."""

from __future__ import annotations

from typing import Any

import pytest

from parley.exceptions import ConfigError
from parley.oai import OpenAIWrapper
from parley.oai.anthropic import AnthropicClient
from parley.testing import FakeLLMServer

from . import scenarios

MODEL = "claude-3-5-sonnet-20240620"


def _entry(server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
    return scenarios.entry(server, "anthropic", MODEL, **extra)


def test_two_agent_chat_sends_system_and_alternating_turns(fake_llm: FakeLLMServer) -> None:
    config = _entry(fake_llm, temperature=0.3, top_k=5, stop=["END"])
    scenarios.two_agent_chat(fake_llm, config)
    first = fake_llm.received[0]
    assert first.path == "/v1/messages"
    # The SDK sends the key as x-api-key (anthropic 0.x) or a bearer token (2.x).
    sent = {first.headers.get("x-api-key"), first.headers.get("authorization")}
    assert sent & {config["api_key"], f"Bearer {config['api_key']}"}
    body = first.json
    assert body["system"] == "You are a helpful AI Assistant."
    assert body["max_tokens"] == 4096  # Anthropic requires it: AutoGen's default
    assert (body["temperature"], body["top_k"], body["stop_sequences"]) == (0.3, 5, ["END"])
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hi bob."}]}]
    third = fake_llm.requests[2]["messages"]
    assert [m["role"] for m in third] == ["user", "assistant", "user"]


def test_tool_call_round_trip_sends_tool_use_and_tool_result(fake_llm: FakeLLMServer) -> None:
    scenarios.tool_round_trip(fake_llm, _entry(fake_llm, tool_choice="required"))
    first, second = fake_llm.requests
    assert first["tools"] == [
        {
            "name": "add",
            "description": "Add two ints.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer", "description": "a"},
                    "b": {"type": "integer", "description": "b"},
                },
                "required": ["a", "b"],
            },
        }
    ]
    assert first["tool_choice"] == {"type": "any"}
    assert second["messages"][-2:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_1", "name": "add", "input": {"a": 1, "b": 2}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "3"}],
        },
    ]


def test_streamed_tool_call_is_one_call(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(tool_calls=[{"id": "toolu_9", "name": "add", "arguments": {"a": 1, "b": 2}}])
    tools = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]
    client = OpenAIWrapper(config_list=[_entry(fake_llm)])
    response = client.create(messages=scenarios.HI, tools=tools, stream=True)
    choice = response.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert (call.id, call.function.name, call.function.arguments) == (
        "toolu_9",
        "add",
        '{"a": 1, "b": 2}',
    )


def test_no_credentials_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="no api_key"):
        AnthropicClient(model=MODEL)


def test_aws_keys_choose_bedrock_and_gcp_keys_vertex(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    bedrock = AnthropicClient(
        model=MODEL, aws_access_key="a", aws_secret_key="s", aws_region="us-east-1"
    )
    vertex = AnthropicClient(model=MODEL, gcp_project_id="p", gcp_region="us-east5")
    assert (bedrock._cls, vertex._cls) == ("AsyncAnthropicBedrock", "AsyncAnthropicVertex")
    assert vertex._settings["project_id"] == "p"


def test_bedrock_and_vertex_model_ids_are_priced() -> None:
    client = AnthropicClient(model=MODEL, api_key="k")
    response = _priced("us.anthropic.claude-3-5-sonnet-20240620-v1:0")
    assert client.cost(response) == pytest.approx(0.003 + 0.015)
    assert client.cost(_priced("claude-3-5-sonnet@20240620")) == pytest.approx(0.018)
    assert client.cost(_priced("claude-unknown")) == 0.0


def _priced(model: str) -> Any:
    from parley.oai.providers._base import completion

    return completion(model=model, content="x", prompt_tokens=1000, completion_tokens=1000)


class TestAnthropic(scenarios.ProviderScenarios):
    API_TYPE = "anthropic"
    MODEL = "claude-3-5-sonnet-20240620"
    PRICE = (0.003, 0.015)
    SDK = "anthropic"
    PROTOCOL = "anthropic"
