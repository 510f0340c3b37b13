"""Cohere's v2 chat, through the cohere SDK's ClientV2, answered from the same script."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import cohere
import pytest

from parley.testing import FakeLLMServer

USER: list[Any] = [{"role": "user", "content": "hi"}]
TOOL: Any = {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}


@pytest.fixture
def co(fake_llm: FakeLLMServer) -> Iterator[cohere.ClientV2]:
    cfg = fake_llm.config_list("command-r", api_type="cohere")[0]
    c = cohere.ClientV2(api_key=cfg["api_key"], base_url=cfg["base_url"])
    yield c
    c._client_wrapper.httpx_client.httpx_client.close()


def test_text_reply_with_usage(fake_llm: FakeLLMServer, co: cohere.ClientV2) -> None:
    fake_llm.add_reply("Hello", usage={"prompt_tokens": 3, "completion_tokens": 1})
    r = co.chat(model="command-r", messages=USER, max_tokens=5)
    assert r.message.content is not None
    assert r.message.content[0].text == "Hello"  # type: ignore[union-attr]
    assert r.finish_reason == "COMPLETE"
    assert r.usage is not None
    assert r.usage.tokens is not None
    assert (r.usage.tokens.input_tokens, r.usage.tokens.output_tokens) == (3, 1)
    rec = fake_llm.received[-1]
    assert (rec.protocol, rec.chat["max_tokens"]) == ("cohere", 5)


def test_tool_call_round_trip(fake_llm: FakeLLMServer, co: cohere.ClientV2) -> None:
    seen: list[dict[str, Any]] = []

    def responder(chat: dict[str, Any]) -> Any:
        seen.append(chat)
        if chat["messages"][-1]["role"] == "tool":
            return "sum " + chat["messages"][-1]["content"]
        return {"tool_calls": [{"name": "add", "arguments": {"a": 1}}]}

    fake_llm.responder = responder
    first = co.chat(model="m", messages=USER, tools=[TOOL])
    assert first.finish_reason == "TOOL_CALL"
    (call,) = first.message.tool_calls or []
    assert call.function is not None
    assert (call.function.name, call.function.arguments) == ("add", '{"a": 1}')
    history: list[Any] = [
        *USER,
        {"role": "assistant", "tool_calls": [call.model_dump()]},
        {"role": "tool", "tool_call_id": call.id, "content": "3"},
    ]
    second = co.chat(model="m", messages=history, tools=[TOOL])
    assert second.message.content[0].text == "sum 3"  # type: ignore[index,union-attr]
    assert seen[1]["messages"][-1] == {"role": "tool", "tool_call_id": call.id, "content": "3"}


def test_streaming(fake_llm: FakeLLMServer, co: cohere.ClientV2) -> None:
    fake_llm.add_reply("one two")
    events = list(co.chat_stream(model="m", messages=USER))
    kinds = [e.type for e in events]
    assert kinds == ["message-start", "content-start", "content-delta", "content-delta",
                     "content-end", "message-end"]  # fmt: skip
    text = "".join(e.delta.message.content.text for e in events if e.type == "content-delta")  # type: ignore[union-attr]
    assert text == "one two"
    assert events[-1].delta.finish_reason == "COMPLETE"  # type: ignore[union-attr]


def test_rate_limit_with_retry_after(fake_llm: FakeLLMServer, co: cohere.ClientV2) -> None:
    fake_llm.add_error(429, "slow down", headers={"Retry-After": "0"})
    with pytest.raises(cohere.TooManyRequestsError) as info:
        co.chat(model="m", messages=USER, request_options={"max_retries": 0})
    assert info.value.status_code == 429
    assert info.value.headers["retry-after"] == "0"  # type: ignore[index]
    assert info.value.body["message"] == "slow down"  # type: ignore[index]


def test_strict_rejects_an_unknown_role(co: cohere.ClientV2) -> None:
    with pytest.raises(cohere.BadRequestError, match="invalid role 'robot'"):
        co.chat(model="m", messages=[{"role": "robot", "content": "x"}])  # type: ignore[list-item]
