"""A provider's error that echoes the configured credentials (a Google 400 quoting its
``AIza...`` key, say) shows them nowhere: not in the exception the caller gets, its repr, its
chained causes or their SDK attributes, a printed traceback, a span, or the web page.

Every provider parley has a client for is asked through its real SDK against the fake
server, whose wire answers a 400 in that provider's error shape quoting every key of the
config. The keys are plain random tokens (no ``sk-`` prefix): scrubbing must go by the values
parley was configured with, not by what keys usually look like.
"""

from __future__ import annotations

import json
import traceback
import types
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from parley import ConversableAgent
from parley._core import events as _events
from parley.exceptions import AllConfigsFailedError
from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer

HI = [{"role": "user", "content": "hi"}]
PROVIDERS = [
    "openai",
    "azure",
    "anthropic",
    "google",
    "bedrock",
    "cohere",
    "ollama",
    "mistral",
    "together",
    "groq",
    "cerebras",
]


def _token(prefix: str = "") -> str:
    return f"{prefix}{uuid.uuid4().hex}{uuid.uuid4().hex[:8]}"


def _config(server: FakeLLMServer, api_type: str) -> tuple[dict[str, Any], list[str]]:
    """A config entry for ``api_type`` on ``server`` with fresh keys, and those keys."""
    if api_type == "openai":
        key = _token()
        return {"model": "gpt-4o", "base_url": server.base_url, "api_key": key}, [key]
    if api_type == "azure":
        key = _token()
        entry = {
            "model": "gpt-4o",
            "api_type": "azure",
            "base_url": server.url,
            "api_version": "2024-02-01",
            "api_key": key,
        }
        return entry, [key]
    if api_type == "bedrock":
        keys = [_token("AK"), _token(), _token()]
        entry = server.config_list("anthropic.claude-3-5-sonnet-20240620-v1:0", api_type="bedrock")[
            0
        ]
        entry.update(aws_access_key=keys[0], aws_secret_key=keys[1], aws_session_token=keys[2])
        return entry, keys
    key = _token("AIza") if api_type == "google" else _token()
    model = {"google": "gemini-2.0-flash", "anthropic": "claude-3-5-sonnet-20241022"}
    entry = server.config_list(model.get(api_type, "some-model"), api_type=api_type)[0]
    entry["api_key"] = key
    return entry, [key]


def _echo(server: FakeLLMServer, keys: list[str]) -> None:
    server.add_error(400, "API key not valid. Please pass a valid API key: " + " / ".join(keys))


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo = [error]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)


def _attribute_texts(value: Any) -> list[str]:
    """What an SDK error's attribute shows: its text, a body's JSON, an HTTP exchange's
    headers and content."""
    texts = [repr(value)]
    if isinstance(value, (dict, list)):
        texts.append(json.dumps(value, default=str))
    for name in ("content", "text"):
        try:
            part = getattr(value, name, None)
        except Exception:  # an unread httpx body
            continue
        if isinstance(part, (str, bytes)):
            texts.append(part.decode("utf-8", "replace") if isinstance(part, bytes) else part)
    for holder in (value, getattr(value, "request", None) if hasattr(value, "url") else None):
        headers = getattr(holder, "headers", None)
        if headers is not None and hasattr(headers, "items"):
            texts.append(json.dumps({str(k): str(v) for k, v in headers.items()}))
        url = getattr(holder, "url", None)
        if url is not None:
            texts.append(str(url))
    return texts


def _everything_shown(error: BaseException) -> str:
    texts = ["".join(traceback.format_exception(error))]
    for link in _chain(error):
        texts += [str(link), repr(link), *map(repr, link.args)]
        for value in vars(link).values():
            texts += _attribute_texts(value)
    return "\n".join(texts)


def _assert_clean(text: str, keys: list[str], where: str) -> None:
    for key in keys:
        assert key not in text, f"a configured key shows in {where}"


@pytest.mark.parametrize("api_type", PROVIDERS)
def test_the_caller_sees_no_echoed_key(fake_llm: FakeLLMServer, api_type: str) -> None:
    entry, keys = _config(fake_llm, api_type)
    _echo(fake_llm, keys)
    client = OpenAIWrapper(config_list=[entry], cache_seed=None)
    with pytest.raises(Exception) as caught:  # noqa: PT011 - each provider's own error type
        client.create(messages=HI)
    error = caught.value
    assert "API key not valid" in str(error) or any(
        "API key not valid" in str(link) for link in _chain(error)
    ), "the server's message itself is kept"
    _assert_clean(_everything_shown(error), keys, "the error, its chain or its attributes")
    assert fake_llm.received, "the request reached the server"


def _traced(capture_content: bool) -> Iterator[Any]:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    import parley.tracing

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    parley.tracing.enable(provider, capture_content=capture_content)
    try:
        yield exporter
    finally:
        parley.tracing.disable()
        provider.shutdown()


@pytest.fixture
def spans() -> Iterator[Any]:
    yield from _traced(capture_content=False)


@pytest.fixture
def content_spans() -> Iterator[Any]:
    yield from _traced(capture_content=True)


def _span_texts(exporter: Any) -> str:
    texts = []
    for span in exporter.get_finished_spans():
        texts.append(json.dumps(dict(span.attributes or {}), default=str))
        texts.append(str(span.status.description))
        for event in span.events:
            texts.append(json.dumps(dict(event.attributes or {}), default=str))
    return "\n".join(texts)


def _failing_chat(entry: dict[str, Any]) -> BaseException:
    assistant = ConversableAgent(
        "assistant", llm_config={"config_list": [entry], "cache_seed": None}
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    with pytest.raises(Exception) as caught:  # noqa: PT011 - each provider's own error type
        user.initiate_chat(assistant, message="hi", max_turns=1, silent=True)
    return caught.value


@pytest.mark.parametrize("api_type", PROVIDERS)
def test_spans_record_the_failure_without_the_key(
    fake_llm: FakeLLMServer, spans: Any, api_type: str
) -> None:
    entry, keys = _config(fake_llm, api_type)
    _echo(fake_llm, keys)
    error = _failing_chat(entry)
    recorded = _span_texts(spans)
    assert "exception.stacktrace" in recorded
    assert "API key not valid" in recorded
    _assert_clean(recorded, keys, "a span")
    _assert_clean(_everything_shown(error), keys, "the chat's error")


@pytest.mark.parametrize("api_type", PROVIDERS)
def test_the_web_page_shows_the_failure_without_the_key(
    fake_llm: FakeLLMServer, api_type: str
) -> None:
    from parley.web._hub import Hub
    from parley.web._listener import WebListener

    entry, keys = _config(fake_llm, api_type)
    _echo(fake_llm, keys)
    hub = Hub()
    listener = WebListener(hub)
    _events.add_listener(listener)
    try:
        _failing_chat(entry)
    finally:
        _events.remove_listener(listener)
    text, unsubscribe = hub.subscribe(lambda _: None)
    unsubscribe()
    errors = [chat.get("error") for chat in json.loads(text)["chats"]]
    assert errors
    assert all(errors), errors
    assert "API key not valid" in errors[0]
    _assert_clean(text, keys, "the page")


def test_every_failure_of_a_config_list_is_scrubbed(fake_llm: FakeLLMServer) -> None:
    # 401s fall back to the next config; the error listing both failures shows neither key.
    first, first_keys = _config(fake_llm, "google")
    second, second_keys = _config(fake_llm, "bedrock")
    keys = first_keys + second_keys
    for _ in range(2):
        fake_llm.add_error(401, "API key not valid: " + " / ".join(keys))
    client = OpenAIWrapper(config_list=[first, second], cache_seed=None)
    with pytest.raises(AllConfigsFailedError) as caught:
        client.create(messages=HI)
    assert len(caught.value.failures) == 2
    shown = _everything_shown(caught.value)
    shown += "".join(_everything_shown(f.error) for f in caught.value.failures)
    _assert_clean(shown, keys, "the failures of the list")


def test_content_spans_do_not_quote_a_key(fake_llm: FakeLLMServer, content_spans: Any) -> None:
    # With capture_content, a tool's output and a model's reply are recorded: not a key in them.
    from parley import register_function

    entry, keys = _config(fake_llm, "openai")
    assistant = ConversableAgent(
        "assistant", llm_config={"config_list": [entry], "cache_seed": None}
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    def leak() -> str:
        return f"the key is {keys[0]}"

    register_function(leak, caller=assistant, executor=user, description="Leak.")
    fake_llm.add_reply(tool_calls=[{"name": "leak", "arguments": {}}])
    fake_llm.add_reply(f"your key is {keys[0]}")
    user.initiate_chat(assistant, message="go", max_turns=2, silent=True)
    recorded = _span_texts(content_spans)
    assert "<redacted>" in recorded
    _assert_clean(recorded, keys, "a content span")


def test_a_key_from_the_environment_is_scrubbed_too(
    fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No api_key in the config: the SDK reads OPENAI_API_KEY, and the server echoes it.
    key = _token()
    monkeypatch.setenv("OPENAI_API_KEY", key)
    _echo(fake_llm, [key])
    client = OpenAIWrapper(config_list=[{"model": "m", "base_url": fake_llm.base_url}])
    with pytest.raises(Exception) as caught:  # noqa: PT011 - openai's BadRequestError
        client.create(messages=HI, cache_seed=None)
    _assert_clean(_everything_shown(caught.value), [key], "the error")


def test_short_values_and_ordinary_words_are_left_alone() -> None:
    from parley._credentials import redact, remember

    remember("short")  # under the minimum length: never blanked
    remember("a-real-credential-value")
    assert redact("a short text") == "a short text"
    assert redact("key a-real-credential-value!") == "key <redacted>!"


class _OpaqueError(Exception):
    """An error whose text comes from private state, as some SDKs' do."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self._hidden = types.SimpleNamespace(key=secret)

    def __str__(self) -> str:
        return f"request refused for key {self._hidden.key}"


def test_a_chained_error_that_cannot_be_cleaned_is_replaced_by_a_stand_in() -> None:
    from parley._credentials import remember, scrub_error
    from parley.exceptions import ModelAPIError, RedactedError

    key = _token()
    remember(key)
    try:
        try:
            try:
                json.loads('{"echo": "' + key + '", ')
            except json.JSONDecodeError as inner:
                raise _OpaqueError(key) from inner
        except _OpaqueError as middle:
            raise ModelAPIError(f"refused {key}", provider="acme") from middle
    except ModelAPIError as caught:
        error = caught
    scrub_error(error)
    shown = "".join(traceback.format_exception(error))
    _assert_clean(shown, [key], "the traceback")
    stand_in = error.__cause__
    assert isinstance(stand_in, RedactedError)
    assert stand_in.kind == "_OpaqueError"
    assert "request refused for key <redacted>" in str(stand_in)
    assert stand_in.__traceback__ is not None  # where it was raised is kept
    decode_error = stand_in.__cause__
    assert isinstance(decode_error, json.JSONDecodeError)
    assert key not in decode_error.doc  # the body it quotes, cleaned in place
