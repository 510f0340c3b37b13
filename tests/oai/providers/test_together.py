"""TogetherClient through the together SDK against the fake server."""

from __future__ import annotations

from typing import Any

from parley.testing import FakeLLMServer

from . import scenarios

MODEL = "mistralai/Mixtral-8x7B-Instruct-v0.1"


def _entry(server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
    return scenarios.entry(server, "together", MODEL, **extra)


def test_two_agent_chat_sends_autogens_together_parameters(fake_llm: FakeLLMServer) -> None:
    config = _entry(fake_llm, repetition_penalty=1.1, min_p=0.05, top_k=40)
    scenarios.two_agent_chat(fake_llm, config)
    first = fake_llm.received[0]
    assert first.path == "/v1/chat/completions"
    assert first.json["max_tokens"] == 512  # AutoGen's default for Together
    assert (first.json["repetition_penalty"], first.json["min_p"], first.json["top_k"]) == (
        1.1,
        0.05,
        40,
    )


def test_tool_call_round_trip(fake_llm: FakeLLMServer) -> None:
    scenarios.tool_round_trip(fake_llm, _entry(fake_llm))
    first, second = fake_llm.requests
    assert first["tools"][0]["function"]["parameters"]["required"] == ["a", "b"]
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "add"
    assert second["messages"][-1]["content"] == "3"


class TestTogether(scenarios.ProviderScenarios):
    API_TYPE = "together"
    MODEL = "mistralai/Mixtral-8x7B-Instruct-v0.1"
    PRICE = (0.0006, 0.0006)
    SDK = "together"
