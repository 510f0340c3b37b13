"""Anthropic's Messages API, through the anthropic SDK, answered from the same script."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from parley.testing import FakeLLMServer

USER = [{"role": "user", "content": "hi"}]
TOOL = {
    "name": "add",
    "description": "Add two numbers",
    "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}}},
}


@pytest.fixture
def claude(fake_llm: FakeLLMServer) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(api_key="k", base_url=fake_llm.url, max_retries=0) as c:
        yield c


def test_text_reply_with_usage(fake_llm: FakeLLMServer, claude: anthropic.Anthropic) -> None:
    fake_llm.add_reply("Hello there", usage={"prompt_tokens": 7, "completion_tokens": 2})
    msg = claude.messages.create(
        model="claude-x", max_tokens=100, system="Be brief.", messages=USER
    )
    assert msg.content[0].type == "text"
    assert msg.content[0].text == "Hello there"
    assert msg.stop_reason == "end_turn"
    assert (msg.usage.input_tokens, msg.usage.output_tokens) == (7, 2)
    assert msg.model == "claude-x"
    rec = fake_llm.received[-1]
    assert rec.protocol == "anthropic"
    assert rec.chat["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]
    assert rec.chat["max_tokens"] == 100
    assert fake_llm.requests[-1] == rec.json  # the body as Anthropic got it


def test_stop_sequence_cuts_the_text(fake_llm: FakeLLMServer, claude: anthropic.Anthropic) -> None:
    fake_llm.add_reply("Thought: x\nObservation: y")
    msg = claude.messages.create(
        model="m", max_tokens=10, messages=USER, stop_sequences=["Observation:"]
    )
    assert msg.content[0].text == "Thought: x\n"  # type: ignore[union-attr]
    assert (msg.stop_reason, msg.stop_sequence) == ("stop_sequence", "Observation:")


def test_tool_call_round_trip(fake_llm: FakeLLMServer, claude: anthropic.Anthropic) -> None:
    seen: list[dict[str, Any]] = []

    def responder(chat: dict[str, Any]) -> Any:
        seen.append(chat)
        if chat["messages"][-1]["role"] == "tool":
            return f"The sum is {chat['messages'][-1]['content']}"
        return {"tool_calls": [{"name": "add", "arguments": {"a": 1}}]}

    fake_llm.responder = responder
    first = claude.messages.create(model="m", max_tokens=50, messages=USER, tools=[TOOL])  # type: ignore[list-item]
    assert first.stop_reason == "tool_use"
    (use,) = first.content
    assert use.type == "tool_use"
    assert (use.name, use.input) == ("add", {"a": 1})
    assert seen[0]["tools"][0]["function"]["name"] == "add"
    history: list[Any] = [
        *USER,
        {"role": "assistant", "content": [use.model_dump()]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "3"}],
        },
    ]
    second = claude.messages.create(model="m", max_tokens=50, messages=history, tools=[TOOL])  # type: ignore[list-item]
    assert second.content[0].text == "The sum is 3"  # type: ignore[union-attr]
    assert seen[1]["messages"][1]["tool_calls"][0]["id"] == use.id
    assert seen[1]["messages"][2] == {"role": "tool", "tool_call_id": use.id, "content": "3"}


def test_streaming_text_and_tool_use(fake_llm: FakeLLMServer, claude: anthropic.Anthropic) -> None:
    fake_llm.add_reply("one two three", usage={"completion_tokens": 3})
    with claude.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
        texts = list(stream.text_stream)
        final = stream.get_final_message()
    assert texts == ["one ", "two ", "three"]
    assert final.usage.output_tokens == 3
    fake_llm.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 1, "b": 22222222222}}])
    events = list(claude.messages.create(model="m", max_tokens=10, messages=USER, stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start"
    assert kinds[-1] == "message_stop"
    deltas = [e.delta for e in events if e.type == "content_block_delta"]
    assert len(deltas) > 1
    assert all(d.type == "input_json_delta" for d in deltas)
    fake_llm.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 5}}])
    with claude.messages.stream(model="m", max_tokens=10, messages=USER) as stream:
        message = stream.get_final_message()
    assert message.content[0].input == {"a": 5}  # type: ignore[union-attr]
    assert message.stop_reason == "tool_use"


def test_rate_limit_with_retry_after(fake_llm: FakeLLMServer, claude: anthropic.Anthropic) -> None:
    fake_llm.add_error(429, "slow down", headers={"Retry-After": "7"})
    with pytest.raises(anthropic.RateLimitError) as info:
        claude.messages.create(model="m", max_tokens=10, messages=USER)
    assert info.value.status_code == 429
    assert info.value.response.headers["retry-after"] == "7"
    assert info.value.body == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "slow down"},
    }


@pytest.mark.parametrize(
    ("messages", "words"),
    [
        ([{"role": "assistant", "content": "hi"}], 'first message must use the "user" role'),
        ([*USER, {"role": "user", "content": "again"}], "roles must alternate"),
        ([{"role": "system", "content": "x"}, *USER], 'Unexpected role "system"'),
        (
            [
                *USER,
                {"role": "assistant", "content": "no tool"},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "3"}],
                },
            ],
            "unexpected `tool_use_id`",
        ),
    ],
)
def test_strict_rejections(claude: anthropic.Anthropic, messages: list[Any], words: str) -> None:
    with pytest.raises(anthropic.BadRequestError) as info:
        claude.messages.create(model="m", max_tokens=10, messages=messages)
    assert words in info.value.message
    assert info.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]


def test_missing_max_tokens_is_rejected(claude: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.BadRequestError, match="max_tokens: Field required"):
        claude.post("/v1/messages", body={"model": "m", "messages": USER}, cast_to=object)


def test_api_key_checked_in_x_api_key() -> None:
    with FakeLLMServer(api_key="sk-ant", default="in") as server:
        with (
            anthropic.Anthropic(api_key="wrong", base_url=server.url, max_retries=0) as c,
            pytest.raises(anthropic.AuthenticationError),
        ):
            c.messages.create(model="m", max_tokens=10, messages=USER)  # type: ignore[arg-type]
        cfg = server.config_list("claude-x", api_type="anthropic")[0]
        assert cfg["api_type"] == "anthropic"
        with anthropic.Anthropic(
            api_key=cfg["api_key"], base_url=cfg["base_url"], max_retries=0
        ) as c:
            msg = c.messages.create(model=cfg["model"], max_tokens=10, messages=USER)  # type: ignore[arg-type]
        assert msg.content[0].text == "in"  # type: ignore[union-attr]
