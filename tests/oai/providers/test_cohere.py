"""CohereClient (``api_type`` "cohere"): chat v2 messages and parameters, and agents talking to
FakeLLMServer's Cohere wire through the cohere SDK."""

from __future__ import annotations

from typing import Any

from parley.oai import OpenAIWrapper
from parley.oai.cohere import request_of, to_messages
from parley.testing import FakeLLMServer

from . import scenarios

MODEL = "command-r"


def _entry(server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
    return scenarios.entry(server, "cohere", MODEL, **extra)


def test_messages_keep_tool_calls_and_their_results() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    out = to_messages(
        [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": [{"type": "text", "text": "add"}]},
            {"role": "assistant", "content": "I will add.", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "2"},
        ]
    )
    assert out == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "add"},
        {"role": "assistant", "tool_calls": [call], "tool_plan": "I will add."},
        {"role": "tool", "tool_call_id": "c1", "content": "2"},
    ]


def test_parameters_under_autogens_names() -> None:
    params = {"model": "m", "messages": [], "temperature": 0.1, "max_tokens": 9, "k": 3}
    params |= {"p": 0.5, "seed": 1, "frequency_penalty": 0.2, "presence_penalty": 0.3, "stop": "X"}
    request = request_of(params)
    assert {k: v for k, v in request.items() if k not in ("model", "messages")} == {
        "temperature": 0.1,
        "max_tokens": 9,
        "k": 3,
        "p": 0.5,
        "seed": 1,
        "frequency_penalty": 0.2,
        "presence_penalty": 0.3,
        "stop_sequences": ["X"],
    }


def test_two_agents_chat(fake_llm: FakeLLMServer) -> None:
    scenarios.two_agents_with_system_messages(fake_llm, _entry(fake_llm))
    assert fake_llm.received[1].json["messages"][0] == {
        "role": "system",
        "content": "You are Alice.",
    }


def test_tool_call_round_trip(fake_llm: FakeLLMServer) -> None:
    second = scenarios.tool_round_trip_registered_by_decorators(fake_llm, _entry(fake_llm))
    messages = second.json["messages"]
    call = messages[2]["tool_calls"][0]
    assert call["function"]["name"] == "add"
    assert messages[3] == {"role": "tool", "tool_call_id": call["id"], "content": "3"}


def test_the_key_is_sent_as_a_bearer_token(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    config = _entry(fake_llm)
    OpenAIWrapper(config_list=[config], cache_seed=None).create(messages=scenarios.HI)
    assert fake_llm.received[0].headers["authorization"] == f"Bearer {config['api_key']}"


class TestCohere(scenarios.ProviderScenarios):
    API_TYPE = "cohere"
    MODEL = MODEL
    PRICE = (0.00015, 0.0006)
    SDK = "cohere"
    PROTOCOL = "cohere"
