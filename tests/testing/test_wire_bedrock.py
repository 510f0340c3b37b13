"""Bedrock's Converse API, through boto3's bedrock-runtime client, answered from the same
script; converse-stream's AWS event-stream frames parsed by botocore itself."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from parley.testing import FakeLLMServer

USER = [{"role": "user", "content": [{"text": "hi"}]}]
TOOLS = {"tools": [{"toolSpec": {"name": "add", "inputSchema": {"json": {"type": "object"}}}}]}


@pytest.fixture
def bedrock(fake_llm: FakeLLMServer) -> Iterator[Any]:
    cfg = fake_llm.config_list("anthropic.claude-3", api_type="bedrock")[0]
    client = boto3.client(
        "bedrock-runtime",
        region_name=cfg["aws_region"],
        endpoint_url=cfg["base_url"],
        aws_access_key_id=cfg["aws_access_key"],
        aws_secret_access_key=cfg["aws_secret_key"],
        config=Config(retries={"total_max_attempts": 1}),
    )
    yield client
    client.close()


def test_text_reply_with_usage(fake_llm: FakeLLMServer, bedrock: Any) -> None:
    fake_llm.add_reply("Hello", usage={"prompt_tokens": 5, "completion_tokens": 1})
    r = bedrock.converse(
        modelId="anthropic.claude-3:0",
        messages=USER,
        system=[{"text": "Be brief."}],
        inferenceConfig={"maxTokens": 30},
    )
    assert r["output"]["message"]["content"] == [{"text": "Hello"}]
    assert r["stopReason"] == "end_turn"
    assert (r["usage"]["inputTokens"], r["usage"]["outputTokens"]) == (5, 1)
    rec = fake_llm.received[-1]
    assert rec.protocol == "bedrock"
    assert rec.headers["authorization"].startswith("AWS4-HMAC-SHA256")
    assert rec.chat["model"] == "anthropic.claude-3:0"
    assert rec.chat["messages"][0] == {"role": "system", "content": "Be brief."}
    assert rec.chat["max_tokens"] == 30


def test_tool_call_round_trip(fake_llm: FakeLLMServer, bedrock: Any) -> None:
    seen: list[dict[str, Any]] = []

    def responder(chat: dict[str, Any]) -> Any:
        seen.append(chat)
        if chat["messages"][-1]["role"] == "tool":
            return "sum " + chat["messages"][-1]["content"]
        return {"tool_calls": [{"name": "add", "arguments": {"a": 1}}]}

    fake_llm.responder = responder
    first = bedrock.converse(modelId="m", messages=USER, toolConfig=TOOLS)
    assert first["stopReason"] == "tool_use"
    (block,) = first["output"]["message"]["content"]
    use = block["toolUse"]
    assert (use["name"], use["input"]) == ("add", {"a": 1})
    result = {"toolResult": {"toolUseId": use["toolUseId"], "content": [{"json": {"sum": 3}}]}}
    history = [*USER, first["output"]["message"], {"role": "user", "content": [result]}]
    second = bedrock.converse(modelId="m", messages=history, toolConfig=TOOLS)
    assert second["output"]["message"]["content"] == [{"text": 'sum {"sum": 3}'}]
    assert seen[0]["tools"][0]["function"]["name"] == "add"
    assert seen[1]["messages"][-1]["tool_call_id"] == use["toolUseId"]


def test_streaming_event_stream(fake_llm: FakeLLMServer, bedrock: Any) -> None:
    fake_llm.add_reply("one two", tool_calls=[{"name": "add", "arguments": {"a": 12345678901}}])
    r = bedrock.converse_stream(modelId="m", messages=USER)
    events = list(r["stream"])
    kinds = [next(iter(e)) for e in events]
    assert kinds[0] == "messageStart"
    assert kinds[-2:] == ["messageStop", "metadata"]
    text = "".join(
        e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e
    )
    arguments = "".join(
        e["contentBlockDelta"]["delta"].get("toolUse", {}).get("input", "")
        for e in events
        if "contentBlockDelta" in e
    )
    assert text == "one two"
    assert arguments == '{"a": 12345678901}'
    assert events[-2]["messageStop"]["stopReason"] == "tool_use"
    assert events[-1]["metadata"]["usage"]["outputTokens"] > 0


def test_throttling_with_retry_after(fake_llm: FakeLLMServer, bedrock: Any) -> None:
    fake_llm.add_error(429, "Too many requests", headers={"Retry-After": "4"})
    with pytest.raises(ClientError) as info:
        bedrock.converse(modelId="m", messages=USER)
    error = info.value.response
    assert error["Error"]["Code"] == "ThrottlingException"
    assert error["Error"]["Message"] == "Too many requests"
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 429
    assert error["ResponseMetadata"]["HTTPHeaders"]["retry-after"] == "4"
    assert isinstance(info.value, bedrock.exceptions.ThrottlingException)


@pytest.mark.parametrize(
    ("messages", "words"),
    [
        ([{"role": "assistant", "content": [{"text": "x"}]}], "must start with a user message"),
        ([*USER, *USER], "must alternate between user and assistant"),
        (
            [
                *USER,
                {"role": "assistant", "content": [{"text": "x"}]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": []}}]},
            ],
            "toolResult blocks at messages.2.content exceeds",
        ),
    ],
)
def test_strict_rejections(bedrock: Any, messages: list[Any], words: str) -> None:
    with pytest.raises(bedrock.exceptions.ValidationException) as info:
        bedrock.converse(modelId="m", messages=messages)
    assert words in info.value.response["Error"]["Message"]
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_access_key_checked_when_the_server_has_a_key() -> None:
    with FakeLLMServer(api_key="AKIAFAKE", default="ok") as server:
        client = boto3.client(
            "bedrock-runtime",
            region_name="us-east-1",
            endpoint_url=server.url,
            aws_access_key_id="AKIAOTHER",
            aws_secret_access_key="s",
            config=Config(retries={"total_max_attempts": 1}),
        )
        with pytest.raises(ClientError, match="UnrecognizedClientException"):
            client.converse(modelId="m", messages=USER)
        client.close()
