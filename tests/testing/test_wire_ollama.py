"""Ollama's chat API, through the ollama SDK, answered from the same script."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ollama
import pytest

from parley.testing import FakeLLMServer

USER = [{"role": "user", "content": "hi"}]


@pytest.fixture
def client(fake_llm: FakeLLMServer) -> Iterator[ollama.Client]:
    c = ollama.Client(host=fake_llm.config_list(api_type="ollama")[0]["client_host"])
    yield c
    c._client.close()  # the SDK's client has no close() of its own


def test_text_reply_with_counts(fake_llm: FakeLLMServer, client: ollama.Client) -> None:
    fake_llm.add_reply("Hello", usage={"prompt_tokens": 9, "completion_tokens": 1})
    r = client.chat(model="llama3", messages=USER, options={"num_predict": 20, "stop": ["x"]})
    assert r.message.content == "Hello"
    assert (r.prompt_eval_count, r.eval_count, r.done_reason) == (9, 1, "stop")
    rec = fake_llm.received[-1]
    assert rec.protocol == "ollama"
    assert rec.json["stream"] is False  # the SDK's default for a call
    assert (rec.chat["max_tokens"], rec.chat["stop"]) == (20, ["x"])


def test_tool_call_round_trip(fake_llm: FakeLLMServer, client: ollama.Client) -> None:
    seen: list[dict[str, Any]] = []

    def responder(chat: dict[str, Any]) -> Any:
        seen.append(chat)
        if chat["messages"][-1]["role"] == "tool":
            return "sum: " + chat["messages"][-1]["content"]
        return {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}

    fake_llm.responder = responder
    tool = {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}
    first = client.chat(model="m", messages=USER, tools=[tool])
    (call,) = first.message.tool_calls or []
    assert (call.function.name, call.function.arguments) == ("add", {"a": 1, "b": 2})
    history: list[Any] = [
        *USER,
        first.message,
        {"role": "tool", "content": "3", "tool_name": "add"},
    ]
    assert client.chat(model="m", messages=history, tools=[tool]).message.content == "sum: 3"
    assert seen[0]["tools"][0]["function"]["name"] == "add"
    assert seen[1]["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"a": 1, "b": 2}'


def test_streaming(fake_llm: FakeLLMServer, client: ollama.Client) -> None:
    fake_llm.add_reply("one two three")
    parts = list(client.chat(model="m", messages=USER, stream=True))
    assert [p.message.content for p in parts] == ["one ", "two ", "three", ""]
    assert parts[-1].done
    assert not parts[0].done
    # without "stream", Ollama's server streams
    fake_llm.add_reply("ab")
    raw = client._client.post("/api/chat", json={"model": "m", "messages": USER})
    assert raw.headers["content-type"] == "application/x-ndjson"
    assert raw.text.count("\n") == 2


def test_error_with_retry_after(fake_llm: FakeLLMServer, client: ollama.Client) -> None:
    fake_llm.add_error(429, "too many", headers={"Retry-After": "2"})
    with pytest.raises(ollama.ResponseError) as info:
        client.chat(model="m", messages=USER)
    assert info.value.status_code == 429
    assert info.value.error == "too many"


def test_strict_rejects_an_unknown_role(client: ollama.Client) -> None:
    # The SDK itself refuses to send it, so it goes by its HTTP client.
    bad = {"model": "m", "messages": [{"role": "robot", "content": "x"}]}
    r = client._client.post("/api/chat", json=bad)
    assert (r.status_code, r.json()) == (400, {"error": "invalid role: robot"})
