"""CerebrasClient through the cerebras-cloud-sdk against the fake server."""

from __future__ import annotations

from typing import Any

from parley.testing import FakeLLMServer

from . import scenarios


def _entry(server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
    return scenarios.entry(server, "cerebras", "llama3.1-8b", **extra)


def test_two_agent_chat_makes_only_the_chats_requests(fake_llm: FakeLLMServer) -> None:
    scenarios.two_agent_chat(fake_llm, _entry(fake_llm, seed=3, temperature=0.2))
    # No warm-up request of the SDK's own: every request is one of the chat's.
    assert {r.path for r in fake_llm.received} == {"/v1/chat/completions"}
    assert (fake_llm.requests[0]["seed"], fake_llm.requests[0]["temperature"]) == (3, 0.2)


def test_tool_call_round_trip(fake_llm: FakeLLMServer) -> None:
    scenarios.tool_round_trip(fake_llm, _entry(fake_llm))
    second = fake_llm.requests[1]
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": "3"}


class TestCerebras(scenarios.ProviderScenarios):
    API_TYPE = "cerebras"
    MODEL = "llama3.1-8b"
    PRICE = (0.0001, 0.0001)
    SDK = "cerebras.cloud.sdk"
