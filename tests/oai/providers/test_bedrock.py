"""BedrockClient through boto3's bedrock-runtime client against the fake server's Converse
wire (SigV4-signed requests, converse-stream's AWS event-stream frames parsed by botocore)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from parley import runtime_logging
from parley.exceptions import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ModelServerError,
    RateLimitError,
)
from parley.io import IOScripted, IOStream
from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer

from . import scenarios

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
SECRET = "parley-fake-secret"  # the fake server's aws_secret_key


def _entry(server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
    return scenarios.entry(server, "bedrock", MODEL, **extra)


def _sent_anywhere(server: FakeLLMServer, text: str) -> bool:
    return any(text.encode() in r.raw or text in json.dumps(r.headers) for r in server.received)


def test_two_agent_chat_sends_system_alternation_and_inference_config(
    fake_llm: FakeLLMServer,
) -> None:
    config = _entry(fake_llm, temperature=0.3, max_tokens=64, top_p=0.9, stop=["END"])
    before = json.dumps(config, sort_keys=True)
    scenarios.two_agent_chat(fake_llm, config)
    assert json.dumps(config, sort_keys=True) == before  # the caller's entry is unchanged
    first, _, third = fake_llm.received
    assert first.path == f"/model/{MODEL}/converse"
    assert first.headers["authorization"].startswith("AWS4-HMAC-SHA256")
    assert first.json["system"] == [{"text": "You are a helpful AI Assistant."}]
    assert first.json["messages"] == [{"role": "user", "content": [{"text": "Hi bob."}]}]
    assert first.json["inferenceConfig"] == {
        "maxTokens": 64,
        "temperature": 0.3,
        "topP": 0.9,
        "stopSequences": ["END"],
    }
    assert [m["role"] for m in third.json["messages"]] == ["user", "assistant", "user"]
    # Credentials configure the client: neither the body nor any header carries the secret.
    for record in fake_llm.received:
        assert set(record.json) <= {"messages", "system", "inferenceConfig"}
    assert not _sent_anywhere(fake_llm, SECRET)


def test_tool_call_round_trip_sends_tool_use_and_tool_result(fake_llm: FakeLLMServer) -> None:
    scenarios.tool_round_trip(fake_llm, _entry(fake_llm, tool_choice="required"))
    first, second = fake_llm.requests
    assert first["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "add",
                    "description": "Add two ints.",
                    "inputSchema": {
                        "json": {
                            "type": "object",
                            "properties": {
                                "a": {"type": "integer", "description": "a"},
                                "b": {"type": "integer", "description": "b"},
                            },
                            "required": ["a", "b"],
                        }
                    },
                }
            }
        ],
        "toolChoice": {"any": {}},
    }
    assert second["messages"][-2:] == [
        {
            "role": "assistant",
            "content": [
                {"toolUse": {"toolUseId": "call_1", "name": "add", "input": {"a": 1, "b": 2}}}
            ],
        },
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "call_1", "content": [{"text": "3"}]}}],
        },
    ]


class _Timed(IOScripted):
    """Records when each piece was printed."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[tuple[float, str]] = []

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        self.times.append((time.monotonic(), sep.join(map(str, objects))))
        super().print(*objects, sep=sep, end=end, flush=flush)


def test_streaming_echoes_each_piece_as_it_arrives(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("one two three four", chunk_delay=0.2)
    screen = _Timed()
    with IOStream.set_default(screen):
        reply = OpenAIWrapper(config_list=[_entry(fake_llm)], cache_seed=None).create(
            messages=scenarios.HI, stream=True
        )
    assert reply.choices[0].message.content == "one two three four"
    assert fake_llm.received[0].path == f"/model/{MODEL}/converse-stream"
    pieces = [(t, text) for t, text in screen.times if text.strip()]
    assert "".join(text for _, text in pieces).split() == ["one", "two", "three", "four"]
    # The first words were on screen while the server was still pacing the rest.
    assert pieces[-1][0] - pieces[0][0] >= 0.4


def test_a_streamed_tool_call_is_one_call(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(tool_calls=[{"id": "tu_9", "name": "add", "arguments": {"a": 1, "b": 2}}])
    tools = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]
    client = OpenAIWrapper(config_list=[_entry(fake_llm)], cache_seed=None)
    response = client.create(messages=scenarios.HI, tools=tools, stream=True)
    choice = response.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "tu_9",
        "add",
        {"a": 1, "b": 2},
    )


def test_the_event_loop_runs_while_boto3_waits(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("slow", delay=0.5)
    fake_llm.add_reply("slow stream", delay=0.5)
    client = OpenAIWrapper(config_list=[_entry(fake_llm)], cache_seed=None)

    async def main() -> int:
        ticks = 0
        stop = asyncio.Event()

        async def tick() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.create_task(tick())
        await client.a_create(messages=scenarios.HI)
        await client.a_create(messages=scenarios.HI, stream=True, silent=True)
        stop.set()
        await ticker
        return ticks

    assert asyncio.run(main()) >= 40


def test_a_cancelled_stream_closes_its_connection(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("one two three four five", chunk_delay=30)
    client = OpenAIWrapper(config_list=[_entry(fake_llm)], cache_seed=None)

    async def main() -> None:
        task = asyncio.create_task(client.a_create(messages=scenarios.HI, stream=True))
        await asyncio.to_thread(fake_llm.wait_for_requests, 1)
        await asyncio.sleep(0.2)
        assert fake_llm.open_connections == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    start = time.monotonic()
    asyncio.run(main())  # returns once every worker thread has stopped
    assert time.monotonic() - start < 30  # not after the stream's two minutes
    deadline = time.monotonic() + 10
    while fake_llm.open_connections and time.monotonic() < deadline:
        time.sleep(0.02)
    assert fake_llm.open_connections == 0


def test_throttling_is_a_rate_limit_error_with_aws_code(fake_llm: FakeLLMServer) -> None:
    # The fallback to OpenAI and the waits: ProviderScenarios below.
    fake_llm.add_error(429, "Too many tokens", headers={"Retry-After": "100"})
    alone = OpenAIWrapper(config_list=[_entry(fake_llm, max_retries=0)], cache_seed=None)
    with pytest.raises(RateLimitError) as caught:
        alone.create(messages=scenarios.HI)
    error = caught.value
    assert (error.status_code, error.retry_after, error.code) == (429, 100.0, "ThrottlingException")
    assert str(error) == "bedrock: ThrottlingException: Too many tokens"


def test_a_validation_exception_is_not_retried(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_error(400, "messages: bad field")
    config = _entry(fake_llm)
    with pytest.raises(BadRequestError, match="ValidationException: messages: bad field") as e:
        OpenAIWrapper(config_list=[config], cache_seed=None).create(messages=scenarios.HI)
    assert len(fake_llm.received) == 1
    assert config["aws_access_key"] not in str(e.value)
    assert SECRET not in str(e.value)


@pytest.mark.parametrize(
    ("status", "kind", "cls"),
    [
        (403, "AccessDeniedException", AuthenticationError),
        (429, "ModelNotReadyException", ModelServerError),
        (503, "ServiceUnavailableException", ModelServerError),
        (408, "ModelTimeoutException", ModelServerError),
    ],
)
def test_aws_error_codes(
    fake_llm: FakeLLMServer, status: int, kind: str, cls: type[Exception]
) -> None:
    fake_llm.add_error(status, "no", type=kind)
    client = OpenAIWrapper(config_list=[_entry(fake_llm, max_retries=0)], cache_seed=None)
    with pytest.raises(cls, match=kind):
        client.create(messages=scenarios.HI)


def test_a_wrong_access_key_is_an_authentication_error() -> None:
    with FakeLLMServer(api_key="AKIARIGHT", default="ok") as server:
        config = {**_entry(server), "aws_access_key": "AKIAWRONG", "max_retries": 0}
        with pytest.raises(AuthenticationError, match="UnrecognizedClientException") as e:
            OpenAIWrapper(config_list=[config], cache_seed=None).create(messages=scenarios.HI)
    assert "AKIAWRONG" not in str(e.value)
    assert SECRET not in str(e.value)


def test_no_region_is_a_config_error(
    fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    config = {k: v for k, v in _entry(fake_llm).items() if k != "aws_region"}
    with pytest.raises(ConfigError, match="aws_region"):
        OpenAIWrapper(config_list=[config], cache_seed=None).create(messages=scenarios.HI)


def test_cross_region_inference_profiles_are_priced(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok", usage={"prompt_tokens": 1000, "completion_tokens": 1000})
    config = scenarios.entry(fake_llm, "bedrock", "us.meta.llama3-1-8b-instruct-v1:0")
    response = OpenAIWrapper(config_list=[config], cache_seed=None).create(messages=scenarios.HI)
    assert response.cost == pytest.approx(0.00044)


def test_credentials_stay_out_of_the_runtime_log(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    token = "session-token-SENTINEL-42"
    config = _entry(fake_llm, aws_session_token=token)
    dbname = str(tmp_path / "log.db")
    fake_llm.add_reply("ok")
    runtime_logging.start(config={"dbname": dbname})
    try:
        OpenAIWrapper(config_list=[config], cache_seed=None).create(messages=scenarios.HI)
    finally:
        runtime_logging.stop()
    data = Path(dbname).read_bytes()
    for secret in (SECRET, token, config["aws_access_key"]):
        assert secret.encode() not in data
    con = sqlite3.connect(dbname)
    (request,) = con.execute("SELECT request FROM chat_completions").fetchone()
    con.close()
    assert json.loads(request)["messages"] == scenarios.HI
    # The session token is a signed header (it must be), the secret never travels.
    assert fake_llm.received[0].headers["x-amz-security-token"] == token
    assert not _sent_anywhere(fake_llm, SECRET)


class TestBedrock(scenarios.ProviderScenarios):
    API_TYPE = "bedrock"
    MODEL = MODEL
    PRICE = (0.003, 0.015)
    SDK = "boto3"
    PROTOCOL = "bedrock"
