"""A hostile or broken provider reply (a body that is not JSON, ``{}``, a JSON array,
``null``, fields of the wrong types, no content and no reason) is one typed error naming the
provider and what was wrong: :class:`MalformedResponseError`, a server error, so it is retried
and then the next config of the list is tried. Never a raw ``TypeError``, ``AttributeError``,
``JSONDecodeError`` or pydantic error, and never a silently empty reply.

Every provider is asked through its real SDK against the fake server, which answers the bad
body verbatim on that provider's wire.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from parley.exceptions import MalformedResponseError, ModelServerError
from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer

HI = [{"role": "user", "content": "hi"}]
# api_type -> (model, the provider name errors carry)
PROVIDERS: dict[str, tuple[str, str]] = {
    "openai": ("gpt-4o", "openai"),
    "azure": ("gpt-4o", "azure"),
    "anthropic": ("claude-3-5-sonnet-20241022", "anthropic"),
    "google": ("gemini-2.0-flash", "google"),
    "bedrock": ("anthropic.claude-3-5-sonnet-20240620-v1:0", "bedrock"),
    "cohere": ("command-r", "cohere"),
    "ollama": ("llama3", "ollama"),
    "mistral": ("mistral-large-latest", "mistral"),
    "together": ("meta-llama/Llama-3-8b-chat-hf", "together"),
    "groq": ("llama3-8b-8192", "groq"),
    "cerebras": ("llama3.1-8b", "cerebras"),
}
# Wrong types for the fields each provider's reply is read from.
WRONG_TYPES = (
    '{"id": 5, "model": 7, "choices": 7, "content": 7, "candidates": 7, "output": 7,'
    ' "message": 7, "usage": "many"}'
)
BODIES = {
    "not-json": "this is not JSON",
    "empty-object": "{}",
    "array": "[]",
    "null": "null",
    "wrong-types": WRONG_TYPES,
}
# Streams: OpenAI's server-sent events (the OpenAI-compatible providers' and Anthropic's SDKs
# read the same framing) carrying bad data.
STREAMED = {
    "not-json": "data: this is not JSON\n\n",
    "empty-object": "data: {}\n\ndata: [DONE]\n\n",
    "array": "data: []\n\ndata: [DONE]\n\n",
    "null": "data: null\n\ndata: [DONE]\n\n",
    "wrong-types": 'data: {"id": "c", "model": "m", "created": 1, "choices": 7}\n\n',
    "no-chunks": "data: [DONE]\n\n",
    "no-choices": 'data: {"id": "c", "model": "m", "created": 1, "choices": []}\n\n',
}
STREAMING_PROVIDERS = ["openai", "anthropic", "mistral", "together", "groq", "cerebras"]


def _entry(server: FakeLLMServer, api_type: str, **extra: Any) -> dict[str, Any]:
    model = PROVIDERS[api_type][0]
    if api_type == "openai":
        return server.config_list(model, **extra)[0]
    if api_type == "azure":
        return {
            "model": model,
            "api_type": "azure",
            "base_url": server.url,
            "api_version": "2024-02-01",
            "api_key": "parley-test-key",
            **extra,
        }
    return server.config_list(model, api_type=api_type, **extra)[0]


def _assert_names_provider(error: BaseException, api_type: str) -> None:
    provider = PROVIDERS[api_type][1]
    assert type(error) is MalformedResponseError, f"{type(error).__name__}: {error}"
    assert isinstance(error, ModelServerError)  # the server's fault: retried, then moved past
    assert error.provider == provider
    assert str(error).startswith(f"{provider}: the answer is not a valid reply: ")


@pytest.mark.parametrize("body", list(BODIES))
@pytest.mark.parametrize("api_type", list(PROVIDERS))
def test_a_bad_body_is_one_typed_error_naming_the_provider(
    fake_llm: FakeLLMServer, api_type: str, body: str
) -> None:
    fake_llm.add_malformed(BODIES[body])
    client = OpenAIWrapper(config_list=[_entry(fake_llm, api_type, max_retries=0)])
    with pytest.raises(MalformedResponseError) as caught:
        client.create(messages=HI, cache_seed=None)
    _assert_names_provider(caught.value, api_type)


@pytest.mark.parametrize("body", list(STREAMED))
@pytest.mark.parametrize("api_type", STREAMING_PROVIDERS)
def test_a_bad_stream_is_one_typed_error_naming_the_provider(
    fake_llm: FakeLLMServer, api_type: str, body: str
) -> None:
    fake_llm.add_malformed(STREAMED[body], content_type="text/event-stream")
    client = OpenAIWrapper(config_list=[_entry(fake_llm, api_type, max_retries=0)])
    with pytest.raises(MalformedResponseError) as caught:
        client.create(messages=HI, stream=True, cache_seed=None)
    _assert_names_provider(caught.value, api_type)


@pytest.mark.parametrize("api_type", list(PROVIDERS))
def test_the_fallback_list_moves_to_the_next_config(fake_llm: FakeLLMServer, api_type: str) -> None:
    fake_llm.add_malformed("[]").add_reply("from the next config")
    configs = [_entry(fake_llm, api_type, max_retries=0), _entry(fake_llm, "openai")]
    client = OpenAIWrapper(config_list=configs, cache_seed=None)
    response = client.create(messages=HI)
    assert response.config_id == 1
    assert client.extract_text_or_completion_object(response) == ["from the next config"]


def test_a_malformed_reply_is_retried_as_a_server_error(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_malformed("null").add_reply("the retry's answer")
    client = OpenAIWrapper(config_list=[_entry(fake_llm, "google", max_retries=1)])
    response = client.create(messages=HI, cache_seed=None)
    assert client.extract_text_or_completion_object(response) == ["the retry's answer"]
    assert len(fake_llm.received) == 2


@pytest.mark.parametrize(
    ("api_type", "body", "why"),
    [
        ("google", '{"candidates": []}', "no candidates"),
        ("google", '{"candidates": [{"finishReason": "STOP"}]}', "finish reason (STOP)"),
        (
            "bedrock",
            '{"output": {"message": {"role": "assistant", "content": []}},'
            ' "stopReason": "end_turn", "usage": {"inputTokens": 1, "outputTokens": 0}}',
            "stopReason (end_turn)",
        ),
        ("bedrock", '{"stopReason": "end_turn"}', "no output message"),
    ],
)
def test_an_empty_reply_with_no_reason_is_an_error_not_a_blank(
    fake_llm: FakeLLMServer, api_type: str, body: str, why: str
) -> None:
    fake_llm.add_malformed(body)
    client = OpenAIWrapper(config_list=[_entry(fake_llm, api_type, max_retries=0)])
    with pytest.raises(MalformedResponseError, match=re.escape(why)) as caught:
        client.create(messages=HI, cache_seed=None)
    _assert_names_provider(caught.value, api_type)


@pytest.mark.parametrize(
    ("api_type", "body"),
    [
        ("google", '{"promptFeedback": {"blockReason": "SAFETY"}}'),
        ("google", '{"candidates": [{"finishReason": "SAFETY"}]}'),
        (
            "bedrock",
            '{"output": {"message": {"role": "assistant", "content": []}},'
            ' "stopReason": "guardrail_intervened", "usage": {"inputTokens": 1, "outputTokens": 0}}',
        ),
    ],
)
def test_an_empty_reply_the_provider_explains_says_so(
    fake_llm: FakeLLMServer, api_type: str, body: str
) -> None:
    fake_llm.add_malformed(body)
    client = OpenAIWrapper(config_list=[_entry(fake_llm, api_type, max_retries=0)])
    response = client.create(messages=HI, cache_seed=None)
    assert response.choices[0].finish_reason == "content_filter"


EVENT_STREAM = "application/vnd.amazon.eventstream"
NDJSON = "application/x-ndjson"
SSE = "text/event-stream"


@pytest.mark.parametrize(
    ("api_type", "content_type", "body"),
    [
        ("bedrock", EVENT_STREAM, "not an AWS event stream at all"),
        ("bedrock", EVENT_STREAM, "{}"),
        ("ollama", NDJSON, "not json\n"),
        ("ollama", NDJSON, "[]\n"),
        ("ollama", NDJSON, "{}\n"),
        ("ollama", NDJSON, '{"message": 7, "done": true}\n'),
        ("cohere", SSE, "data: []\n\n"),
        ("cohere", SSE, "data: null\n\n"),
        ("google", SSE, "data: {}\n\n"),
        ("google", SSE, "data: []\n\n"),
        ("google", SSE, 'data: {"candidates": 7}\n\n'),
    ],
)
def test_a_bad_stream_on_other_wires_is_one_typed_error(
    fake_llm: FakeLLMServer, api_type: str, content_type: str, body: str
) -> None:
    fake_llm.add_malformed(body, content_type=content_type)
    client = OpenAIWrapper(config_list=[_entry(fake_llm, api_type, max_retries=0)])
    with pytest.raises(MalformedResponseError) as caught:
        client.create(messages=HI, stream=True, cache_seed=None)
    _assert_names_provider(caught.value, api_type)


def test_a_request_the_sdk_refuses_is_not_blamed_on_the_server(fake_llm: FakeLLMServer) -> None:
    # A bad setting of the caller's is the SDK's own error, not a malformed answer to retry.
    entry = _entry(fake_llm, "google", safety_settings="none, please")
    client = OpenAIWrapper(config_list=[entry], cache_seed=None)
    with pytest.raises(ValueError, match="safety_settings") as caught:
        client.create(messages=HI)
    assert not isinstance(caught.value, MalformedResponseError)
    assert not fake_llm.received
