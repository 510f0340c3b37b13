"""CerebrasClient through the cerebras-cloud-sdk against the fake server."""

from __future__ import annotations

from typing import Any

import pytest

from parley.testing import FakeLLMServer

from . import scenarios

pytest.importorskip("cerebras.cloud.sdk")


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


def test_streaming_echoes_the_text(fake_llm: FakeLLMServer) -> None:
    scenarios.streamed(fake_llm, _entry(fake_llm))


def test_rate_limit_falls_back_to_openai(fake_llm: FakeLLMServer) -> None:
    scenarios.rate_limited_then_other_provider(fake_llm, _entry(fake_llm), "openai")


def test_dropped_connection(fake_llm: FakeLLMServer) -> None:
    scenarios.dropped_connection(fake_llm, _entry(fake_llm))


def test_usage_and_cost(fake_llm: FakeLLMServer) -> None:
    scenarios.usage_and_cost(fake_llm, _entry(fake_llm), (0.0001, 0.0001))


def test_missing_sdk_names_the_extra(
    fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenarios.missing_sdk(monkeypatch, _entry(fake_llm), "cerebras.cloud.sdk", "cerebras")
