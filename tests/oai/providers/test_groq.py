"""GroqClient through the groq SDK against the fake server (Groq's /openai/v1 path)."""

from __future__ import annotations

from typing import Any

from parley.oai.groq import GroqClient
from parley.testing import FakeLLMServer

from . import scenarios


def _entry(server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
    return scenarios.entry(server, "groq", "llama3-8b-8192", **extra)


def test_two_agent_chat_posts_openai_messages_to_groqs_path(fake_llm: FakeLLMServer) -> None:
    scenarios.two_agent_chat(fake_llm, _entry(fake_llm, seed=7, frequency_penalty=0.5))
    first = fake_llm.received[0]
    assert first.path == "/openai/v1/chat/completions"
    assert first.json["seed"] == 7
    assert first.json["frequency_penalty"] == 0.5
    assert first.json["messages"][-1] == {"role": "user", "content": "Hi bob.", "name": "alice"}


def test_tool_call_round_trip(fake_llm: FakeLLMServer) -> None:
    scenarios.tool_round_trip(fake_llm, _entry(fake_llm))
    first, second = fake_llm.requests
    assert first["tools"][0]["function"]["name"] == "add"
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": "3"}


def test_hide_tools_leaves_tools_out_once_they_ran(fake_llm: FakeLLMServer) -> None:
    scenarios.tool_round_trip(fake_llm, _entry(fake_llm, hide_tools="if_any_run"))
    first, second = fake_llm.requests
    assert "tools" in first
    assert "tools" not in second
    assert "hide_tools" not in first


def test_openai_style_base_url_is_the_root(fake_llm: FakeLLMServer) -> None:
    client = GroqClient(model="m", api_key="k", base_url=f"{fake_llm.url}/openai/v1/")
    assert client._settings["base_url"] == fake_llm.url


class TestGroq(scenarios.ProviderScenarios):
    API_TYPE = "groq"
    MODEL = "llama3-8b-8192"
    PRICE = (0.00005, 0.00008)
    SDK = "groq"
