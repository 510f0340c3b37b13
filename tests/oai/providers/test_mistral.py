"""MistralAIClient through the mistralai SDK against the fake server."""

from __future__ import annotations

from typing import Any

from parley.oai.mistral import mistral_messages
from parley.testing import FakeLLMServer

from . import scenarios


def _entry(server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
    return scenarios.entry(server, "mistral", "open-mistral-nemo", **extra)


def test_two_agent_chat_sends_autogens_mistral_parameters(fake_llm: FakeLLMServer) -> None:
    scenarios.two_agent_chat(fake_llm, _entry(fake_llm, random_seed=42, safe_prompt=True))
    first = fake_llm.received[0]
    assert first.path == "/v1/chat/completions"
    assert first.json["random_seed"] == 42
    assert first.json["safe_prompt"] is True
    assert first.json["temperature"] == 0.7  # AutoGen's default for Mistral
    assert first.json["messages"][-1] == {"role": "user", "content": "Hi bob."}  # no name


def test_tool_call_round_trip_names_the_function_in_the_result(fake_llm: FakeLLMServer) -> None:
    scenarios.tool_round_trip(fake_llm, _entry(fake_llm))
    second = fake_llm.requests[1]
    result = second["messages"][-1]
    assert (result["role"], result["name"], result["content"]) == ("tool", "add", "3")


def test_messages_as_autogen_sent_them() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi", "name": "alice"},
        {"role": "assistant", "content": "Hello"},
        {"role": "system", "content": "Now summarise."},
        {"role": "assistant", "content": "Summary."},
    ]
    assert mistral_messages(messages) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Now summarise."},
        {"role": "assistant", "content": "Summary."},
        {"role": "user", "content": "Please continue."},
    ]
    assert messages[1]["name"] == "alice"  # the caller's messages are not changed


class TestMistral(scenarios.ProviderScenarios):
    API_TYPE = "mistral"
    MODEL = "open-mistral-nemo"
    PRICE = (0.00015, 0.00015)
    SDK = "mistralai"
