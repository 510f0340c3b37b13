"""The structured-output matrix: every provider, through ``OpenAIWrapper`` and its real SDK
against one fake server, with ``response_format=<a pydantic model>``:

- a valid reply parses: ``message.parsed`` is the model's instance, the content stays the JSON
  text, and the request carried the schema in the provider's own native field;
- replies that never conform are asked again exactly ``structured_output_retries`` times (each
  retry showing the model its reply and what is wrong with it), then
  ``StructuredOutputError``;
- an invalid reply, then a valid one: parsed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel, Field

from parley.exceptions import StructuredOutputError
from parley.oai import OpenAIWrapper, OutputSchema
from parley.testing import FakeLLMServer


class City(BaseModel):
    name: str
    population: int = Field(ge=0)


GOOD = '{"name": "Lyon", "population": 522000}'
NEGATIVE = '{"name": "Lyon", "population": -5}'
MISSING = '{"name": "Lyon"}'
HI = [
    {"role": "system", "content": "You know cities."},
    {"role": "user", "content": "The largest city on the Rhone?"},
]
SENT_SCHEMA = OutputSchema.of(City).response_format()["json_schema"]["schema"]  # type: ignore[union-attr]

Body = dict[str, Any]
Entry = Callable[[FakeLLMServer], dict[str, Any]]


def _provider(api_type: str, model: str) -> Entry:
    return lambda server: server.config_list(model, api_type=api_type)[0]


def _azure(server: FakeLLMServer) -> dict[str, Any]:
    return {
        "model": "gpt-4o",
        "api_type": "azure",
        "api_version": "2024-08-01-preview",
        "base_url": server.url,
        "api_key": server.api_key or "sk-fake",
    }


def _bedrock_schema(body: Body) -> Any:
    text_format = body["outputConfig"]["textFormat"]
    assert text_format["type"] == "json_schema"
    return json.loads(text_format["structure"]["jsonSchema"]["schema"])


def _gemini_schema(body: Body) -> Any:
    config = body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    return config["responseJsonSchema"]


def _old_claude_schema(body: Body) -> Any:
    (tool,) = body["tools"]
    assert body["tool_choice"] == {"type": "tool", "name": tool["name"]}
    return tool["input_schema"]


def _cohere_schema(body: Body) -> Any:
    assert body["response_format"]["type"] == "json_object"
    return body["response_format"]["json_schema"]


def _openai_schema(body: Body) -> Any:
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "City"
    return body["response_format"]["json_schema"]["schema"]


def _responses_schema(body: Body) -> Any:
    assert (body["text"]["format"]["type"], body["text"]["format"]["name"]) == (
        "json_schema",
        "City",
    )
    return body["text"]["format"]["schema"]


# id, its config entry, the schema as the provider's native field carried it
PROVIDERS: list[tuple[str, Entry, Callable[[Body], Any]]] = [
    ("openai-chat", _provider("openai", "gpt-4o-mini"), _openai_schema),
    ("openai-responses", _provider("responses", "gpt-4o-mini"), _responses_schema),
    ("azure", _azure, _openai_schema),
    (
        "anthropic-4.5+",
        _provider("anthropic", "claude-sonnet-4-6"),
        lambda b: b["output_config"]["format"]["schema"],
    ),
    ("anthropic-older", _provider("anthropic", "claude-3-5-sonnet-20240620"), _old_claude_schema),
    ("gemini", _provider("google", "gemini-2.5-flash"), _gemini_schema),
    ("ollama", _provider("ollama", "llama3.1:8b"), lambda b: b["format"]),
    ("mistral", _provider("mistral", "mistral-large-latest"), _openai_schema),
    ("groq", _provider("groq", "openai/gpt-oss-20b"), _openai_schema),
    ("together", _provider("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo"), _openai_schema),
    ("cerebras", _provider("cerebras", "llama3.1-8b"), _openai_schema),
    ("bedrock", _provider("bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0"), _bedrock_schema),
    ("cohere", _provider("cohere", "command-a-03-2025"), _cohere_schema),
]
IDS = [case[0] for case in PROVIDERS]


@pytest.fixture(scope="module")
def module_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def server(module_server: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """The module's server, its script and logs empty for each test (and checked after)."""
    module_server.reset()
    yield module_server
    errors = list(module_server.errors)
    module_server.reset()
    assert not errors, errors


def _client(server: FakeLLMServer, entry: Entry, **extra: Any) -> OpenAIWrapper:
    return OpenAIWrapper(config_list=[entry(server)], cache_seed=None, **extra)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _shown_the_problems(request: Any, reply: str, *problems: str) -> None:
    """``request`` (a retry, read back as OpenAI chat) ends with the failed ``reply`` and a
    user message naming each of ``problems``."""
    *_, failed, asked = request.chat["messages"]
    assert failed["role"] == "assistant"
    assert json.loads(_text(failed["content"])) == json.loads(reply)
    assert asked["role"] == "user"
    text = _text(asked["content"])
    assert "does not match the JSON schema City" in text
    for problem in problems:
        assert problem in text, text


@pytest.mark.parametrize(("name", "entry", "native"), PROVIDERS, ids=IDS)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_valid_reply_parses(
    server: FakeLLMServer, name: str, entry: Entry, native: Callable[[Body], Any], stream: bool
) -> None:
    server.add_reply(GOOD)
    response = _client(server, entry).create(messages=HI, response_format=City, stream=stream)
    message = response.choices[0].message
    assert message.parsed == City(name="Lyon", population=522000)
    assert isinstance(message.content, str)
    assert json.loads(message.content) == json.loads(GOOD)  # the content stays JSON text
    assert not message.tool_calls
    (request,) = server.received
    assert native(request.json) == SENT_SCHEMA


@pytest.mark.parametrize(("name", "entry", "native"), PROVIDERS, ids=IDS)
@pytest.mark.parametrize("retries", [0, 2])
def test_replies_that_never_conform_raise_after_exactly_n_retries(
    server: FakeLLMServer, name: str, entry: Entry, native: Callable[[Body], Any], retries: int
) -> None:
    bad = [NEGATIVE, MISSING, NEGATIVE][: retries + 1]
    for reply in bad:
        server.add_reply(reply)
    server.add_reply(GOOD)  # never asked for: the limit stops before it
    client = _client(server, entry, structured_output_retries=retries)
    with pytest.raises(StructuredOutputError) as caught:
        client.create(messages=HI, response_format=City)
    error = caught.value
    assert error.attempts == retries + 1
    assert error.schema_name == "City"
    assert json.loads(error.raw) == json.loads(bad[-1])
    assert len(server.received) == retries + 1
    assert all(native(r.json) == SENT_SCHEMA for r in server.received)
    if retries:
        _shown_the_problems(
            server.received[1], NEGATIVE, "$.population: Input should be greater than or equal to 0"
        )
        _shown_the_problems(server.received[2], MISSING, "$.population: Field required")


@pytest.mark.parametrize(("name", "entry", "native"), PROVIDERS, ids=IDS)
def test_an_invalid_reply_then_a_valid_one_parses(
    server: FakeLLMServer, name: str, entry: Entry, native: Callable[[Body], Any]
) -> None:
    server.add_reply(NEGATIVE).add_reply(GOOD)
    response = _client(server, entry).create(messages=HI, response_format=City)
    assert response.choices[0].message.parsed == City(name="Lyon", population=522000)
    assert json.loads(response.choices[0].message.content) == json.loads(GOOD)
    first, second = server.received
    _shown_the_problems(
        second, NEGATIVE, "$.population: Input should be greater than or equal to 0"
    )
    # the retry is the same request (the caller's question kept), the schema still native
    asked = [_text(m["content"]) for m in second.chat["messages"]]
    assert asked.index(HI[1]["content"]) < len(asked) - 2
    assert native(first.json) == native(second.json) == SENT_SCHEMA
