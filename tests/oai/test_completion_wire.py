"""``OpenAIClient.a_create_completion`` / ``create_completion``: the legacy text-completions
request (``POST /completions``) against the loopback fake server, streamed or not."""

from __future__ import annotations

import time
from typing import Any

import openai
import pytest
from openai.types import Completion

from parley.exceptions import MalformedResponseError
from parley.io import IOScripted, IOStream
from parley.oai._streaming import echo_silenced
from parley.oai.providers._openai import OpenAIClient
from parley.testing import FakeLLMServer

MODEL = "gpt-3.5-turbo-instruct"


def _client(server: FakeLLMServer, **kwargs: Any) -> OpenAIClient:
    return OpenAIClient(
        {"base_url": server.base_url, "api_key": "sk-test", **kwargs},
        api_type=None,
        api_version=None,
    )


def _params(**extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "prompt": "Say hi:", **extra}


def test_plain(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(" hi", usage={"prompt_tokens": 3, "completion_tokens": 1})
    response = _client(fake_llm).create_completion(_params(max_tokens=5))
    assert isinstance(response, Completion)
    assert [c.text for c in response.choices] == [" hi"]
    assert response.model == MODEL
    assert response.usage is not None
    assert (response.usage.prompt_tokens, response.usage.total_tokens) == (3, 4)
    (received,) = fake_llm.received
    assert received.path == "/v1/completions"
    assert received.json == {"model": MODEL, "prompt": "Say hi:", "max_tokens": 5}


async def test_async_n_and_list_prompt(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(choices=["a1", "a2", "b1", "b2"])
    response = await _client(fake_llm).a_create_completion(
        {"model": MODEL, "prompt": ["a", "b"], "n": 2}
    )
    assert [(c.index, c.text) for c in response.choices] == [
        (0, "a1"),
        (1, "a2"),
        (2, "b1"),
        (3, "b2"),
    ]


def _comparable(response: Any) -> dict[str, Any]:
    data = response.model_dump()
    for key in ("id", "created"):
        data.pop(key)
    return data


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"n": 2},
        {"prompt": ["first", "second"], "n": 2, "echo": True},
        {"logprobs": 2, "echo": True},
    ],
)
def test_streaming_collected_equals_the_plain_response(
    fake_llm: FakeLLMServer, options: dict[str, Any]
) -> None:
    reply = {"content": " the same text, streamed or not", "finish_reason": "length"}
    fake_llm.add(reply, reply)
    client = _client(fake_llm)
    with echo_silenced(True):
        plain = client.create_completion(_params(**options))
        streamed = client.create_completion(_params(stream=True, **options))
    assert _comparable(streamed) == _comparable(plain)
    # parley asks for the usage chunk, so the usage is the server's own, not an estimate.
    assert fake_llm.last_request["stream_options"] == {"include_usage": True}


def test_streaming_echoes_the_first_choice(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(choices=["one two three", "other"])
    screen = IOScripted()
    with IOStream.set_default(screen):
        response = _client(fake_llm).create_completion(_params(stream=True, n=2))
    assert screen.printed[:3] == ["one ", "two ", "three"]  # as it arrives
    assert "other" not in screen.text
    assert [c.text for c in response.choices] == ["one two three", "other"]


def test_streaming_without_a_usage_chunk_estimates_it(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("a b c")
    client = _client(fake_llm)
    with echo_silenced(True):
        response = client.create_completion(
            _params(prompt="x" * 40, stream=True, stream_options={"include_usage": False})
        )
    assert response.usage is not None
    assert response.usage.prompt_tokens == 10
    assert response.usage.completion_tokens > 0


def test_errors_are_openais_exceptions(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_error(429, "slow down", headers={"x-should-retry": "false"})
    client = _client(fake_llm)
    with pytest.raises(openai.RateLimitError, match="slow down"):
        client.create_completion(_params())
    with pytest.raises(openai.BadRequestError, match="best_of must be greater than or equal to n"):
        client.create_completion(_params(n=3, best_of=2))
    fake_llm.add_malformed()
    with pytest.raises(MalformedResponseError, match="not valid JSON"):
        client.create_completion(_params())


def test_the_timeout_option_is_honoured(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("too late", delay=60)
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        _client(fake_llm).create_completion(_params(timeout=0.3))
    # Ignored, the call would wait the minute for its answer (or time out after the default).
    assert time.monotonic() - started < 30
    assert "timeout" not in fake_llm.last_request  # an option, not a body field


def test_extra_headers_query_and_body(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    _client(fake_llm).create_completion(
        _params(
            extra_headers={"X-Trace-Id": "t-1"},
            extra_query={"tenant": "blue"},
            extra_body={"suffix": "!"},
        )
    )
    (received,) = fake_llm.received
    assert received.headers["x-trace-id"] == "t-1"
    assert received.query == "tenant=blue"
    assert received.json["suffix"] == "!"
    assert not {"extra_headers", "extra_query", "extra_body"} & set(received.json)
