"""Structured output on each provider's own API, through its real SDK against the fake server:
the request carries the provider's native schema field (what each provider's docs name), and
the reply's content is the JSON document, whatever mechanism carried it (Anthropic's forced
tool comes back as content, not as a tool call)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer

from . import scenarios

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
    "additionalProperties": False,
}
FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "city_facts", "schema": SCHEMA, "strict": True},
}
ANSWER = '{"city": "Lyon", "population": 522000}'
ADD = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two ints.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}
OLD_CLAUDE = "claude-3-5-sonnet-20240620"
NEW_CLAUDE = "claude-sonnet-4-6"

Body = dict[str, Any]


def _gemini(body: Body) -> Any:
    config = body["generationConfig"]
    return config["responseMimeType"], config["responseJsonSchema"]


def _bedrock(body: Body) -> Any:
    text_format = body["outputConfig"]["textFormat"]
    definition = text_format["structure"]["jsonSchema"]
    return text_format["type"], definition["name"], json.loads(definition["schema"])


def _cohere(body: Body) -> Any:
    return body["response_format"]


# provider, model, the native field as the request carried it, what it must be
NATIVE: list[tuple[str, str, Callable[[Body], Any], Any]] = [
    ("google", "gemini-2.5-flash", _gemini, ("application/json", SCHEMA)),
    ("ollama", "llama3.1:8b", lambda b: b["format"], SCHEMA),
    (
        "anthropic",
        NEW_CLAUDE,
        lambda b: (b["output_config"], "tools" in b),
        ({"format": {"type": "json_schema", "schema": SCHEMA}}, False),
    ),
    (
        "anthropic",
        OLD_CLAUDE,
        lambda b: (
            [t["name"] for t in b["tools"]],
            b["tools"][0]["input_schema"],
            b["tool_choice"],
        ),
        (["city_facts"], SCHEMA, {"type": "tool", "name": "city_facts"}),
    ),
    (
        "bedrock",
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
        _bedrock,
        ("json_schema", "city_facts", SCHEMA),
    ),
    ("cohere", "command-a-03-2025", _cohere, {"type": "json_object", "json_schema": SCHEMA}),
    ("mistral", "mistral-large-latest", lambda b: b["response_format"], FORMAT),
    ("groq", "openai/gpt-oss-20b", lambda b: b["response_format"], FORMAT),
    ("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", lambda b: b["response_format"], FORMAT),
    ("cerebras", "llama3.1-8b", lambda b: b["response_format"], FORMAT),
]


def _client(server: FakeLLMServer, api_type: str, model: str, **extra: Any) -> OpenAIWrapper:
    entry = scenarios.entry(server, api_type, model, **extra)
    return OpenAIWrapper(config_list=[entry], cache_seed=None)


@pytest.mark.parametrize(
    ("api_type", "model", "field", "expected"),
    NATIVE,
    ids=[f"{case[0]}-{case[1]}" for case in NATIVE],
)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_the_schema_goes_in_the_native_field_and_the_json_comes_back_as_content(
    fake_llm: FakeLLMServer,
    api_type: str,
    model: str,
    field: Callable[[Body], Any],
    expected: Any,
    stream: bool,
) -> None:
    fake_llm.add_reply(ANSWER)
    response = _client(fake_llm, api_type, model).create(
        messages=scenarios.HI, response_format=FORMAT, stream=stream
    )
    (request,) = fake_llm.received
    assert field(request.json) == expected
    if model != OLD_CLAUDE:  # (a forced tool is a tool, read back as one)
        # Every wire reads its provider's field back as OpenAI's response_format.
        assert request.chat["response_format"]["json_schema"]["schema"] == SCHEMA
    message = response.choices[0].message
    assert json.loads(message.content) == json.loads(ANSWER)
    assert not message.tool_calls
    assert response.choices[0].finish_reason == "stop"


@pytest.mark.parametrize(
    ("api_type", "model", "field", "expected"),
    [
        (
            "google",
            "gemini-2.5-flash",
            lambda b: b["generationConfig"],
            {"responseMimeType": "application/json"},
        ),
        ("ollama", "llama3.1:8b", lambda b: b["format"], "json"),
        (
            "bedrock",
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            lambda b: json.loads(
                b["outputConfig"]["textFormat"]["structure"]["jsonSchema"]["schema"]
            ),
            {"type": "object"},
        ),
        ("cohere", "command-a-03-2025", lambda b: b["response_format"], {"type": "json_object"}),
        (
            "mistral",
            "mistral-large-latest",
            lambda b: b["response_format"],
            {"type": "json_object"},
        ),
        (
            "anthropic",
            NEW_CLAUDE,
            lambda b: (b["tools"][0]["name"], b["tools"][0]["input_schema"], b["tool_choice"]),
            ("json_response", {"type": "object"}, {"type": "tool", "name": "json_response"}),
        ),
    ],
    ids=["google", "ollama", "bedrock", "cohere", "mistral", "anthropic"],
)
def test_json_object_asks_for_any_json(
    fake_llm: FakeLLMServer, api_type: str, model: str, field: Any, expected: Any
) -> None:
    fake_llm.add_reply('{"anything": [1, 2]}')
    response = _client(fake_llm, api_type, model).create(
        messages=scenarios.HI, response_format={"type": "json_object"}
    )
    assert field(fake_llm.received[0].json) == expected
    if api_type not in ("anthropic", "bedrock"):  # (those have no JSON mode of their own)
        assert fake_llm.received[0].chat["response_format"] == {"type": "json_object"}
    assert json.loads(response.choices[0].message.content) == {"anything": [1, 2]}


def test_anthropic_native_schema_keeps_the_real_tools_callable(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(tool_calls=[{"id": "toolu_1", "name": "add", "arguments": {"a": 1, "b": 2}}])
    response = _client(fake_llm, "anthropic", NEW_CLAUDE).create(
        messages=scenarios.HI, tools=[ADD], response_format=FORMAT
    )
    body = fake_llm.received[0].json
    assert [t["name"] for t in body["tools"]] == ["add"]
    assert "tool_choice" not in body
    assert body["output_config"]["format"]["schema"] == SCHEMA
    (call,) = response.choices[0].message.tool_calls
    assert call.function.name == "add"


def test_anthropic_output_tool_beside_real_tools_must_be_called_or_a_real_one(
    fake_llm: FakeLLMServer,
) -> None:
    client = _client(fake_llm, "anthropic", OLD_CLAUDE)
    fake_llm.add_reply(tool_calls=[{"id": "toolu_1", "name": "add", "arguments": {"a": 1, "b": 2}}])
    fake_llm.add_reply(tool_calls=[{"id": "toolu_2", "name": "city_facts", "arguments": ANSWER}])
    first = client.create(messages=scenarios.HI, tools=[ADD], response_format=FORMAT)
    body = fake_llm.received[0].json
    assert [t["name"] for t in body["tools"]] == ["add", "city_facts"]
    assert body["tool_choice"] == {"type": "any"}
    (call,) = first.choices[0].message.tool_calls
    assert (call.function.name, first.choices[0].finish_reason) == ("add", "tool_calls")

    history = [
        *scenarios.HI,
        {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
        {"role": "tool", "tool_call_id": call.id, "content": "3"},
    ]
    second = client.create(messages=history, tools=[ADD], response_format=FORMAT)
    message = second.choices[0].message
    assert json.loads(message.content) == json.loads(ANSWER)
    assert not message.tool_calls  # the answer tool's call is the answer, not a tool call
    assert second.choices[0].finish_reason == "stop"


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("none", {"type": "tool", "name": "city_facts"}),
        ({"type": "function", "function": {"name": "add"}}, {"type": "tool", "name": "add"}),
    ],
    ids=["none-forces-the-answer", "a-named-tool-is-kept"],
)
def test_anthropic_output_tool_and_the_callers_tool_choice(
    fake_llm: FakeLLMServer, choice: Any, sent: Any
) -> None:
    fake_llm.add_reply(tool_calls=[{"name": sent["name"], "arguments": ANSWER}])
    _client(fake_llm, "anthropic", OLD_CLAUDE).create(
        messages=scenarios.HI, tools=[ADD], tool_choice=choice, response_format=FORMAT
    )
    assert fake_llm.received[0].json["tool_choice"] == sent


def test_anthropic_output_tool_never_shadows_a_real_tool(fake_llm: FakeLLMServer) -> None:
    own = {"type": "function", "function": {"name": "city_facts", "parameters": {"type": "object"}}}
    fake_llm.add_reply(tool_calls=[{"name": "city_facts_answer", "arguments": ANSWER}])
    response = _client(fake_llm, "anthropic", OLD_CLAUDE).create(
        messages=scenarios.HI, tools=[own], response_format=FORMAT
    )
    assert [t["name"] for t in fake_llm.received[0].json["tools"]] == [
        "city_facts",
        "city_facts_answer",
    ]
    assert json.loads(response.choices[0].message.content) == json.loads(ANSWER)


@pytest.mark.parametrize(
    ("model", "native"),
    [
        ("claude-3-5-sonnet-20240620", False),
        ("claude-3-7-sonnet-latest", False),
        ("claude-sonnet-4-20250514", False),
        ("claude-opus-4-1-20250805", False),
        ("claude-haiku-4-5", True),
        ("claude-opus-4-6", True),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", True),
        ("claude-sonnet-4-5@20250929", True),
    ],
)
def test_anthropic_mechanism_follows_the_model_generation(
    fake_llm: FakeLLMServer, model: str, native: bool
) -> None:
    fake_llm.add_reply(ANSWER)
    _client(fake_llm, "anthropic", model).create(messages=scenarios.HI, response_format=FORMAT)
    body = fake_llm.received[0].json
    assert ("output_config" in body, "tools" in body) == (native, not native)


class TestStrictWires:
    """The fake server refuses malformed native fields as the real APIs do (a 400)."""

    def test_anthropic_tool_choice_must_name_a_declared_tool(self, fake_llm: FakeLLMServer) -> None:
        import anthropic

        sdk = anthropic.Anthropic(base_url=fake_llm.url, api_key="k", max_retries=0)
        tool = {"name": "add", "input_schema": {"type": "object"}}
        with pytest.raises(anthropic.BadRequestError, match="'nope' not found"):
            sdk.messages.create(
                model=OLD_CLAUDE,
                max_tokens=10,
                messages=[{"role": "user", "content": "hi"}],
                tools=[tool],
                tool_choice={"type": "tool", "name": "nope"},
            )
        sdk.close()

    def test_anthropic_output_config_needs_a_schema(self, fake_llm: FakeLLMServer) -> None:
        import anthropic

        sdk = anthropic.Anthropic(base_url=fake_llm.url, api_key="k", max_retries=0)
        with pytest.raises(anthropic.BadRequestError, match="schema"):
            sdk.messages.create(
                model=NEW_CLAUDE,
                max_tokens=10,
                messages=[{"role": "user", "content": "hi"}],
                extra_body={"output_config": {"format": {"type": "json_schema"}}},
            )
        sdk.close()

    def test_gemini_schema_needs_the_json_mime_type(self, fake_llm: FakeLLMServer) -> None:
        from google import genai
        from google.genai import errors, types

        options = types.HttpOptions(
            base_url=fake_llm.url, retry_options=types.HttpRetryOptions(attempts=1)
        )
        sdk = genai.Client(api_key="k", http_options=options)
        config = types.GenerateContentConfig(response_json_schema=SCHEMA)
        with pytest.raises(errors.ClientError, match="application/json"):
            sdk.models.generate_content(model="gemini-2.5-flash", contents="hi", config=config)
        sdk.close()

    def test_forced_tool_with_a_text_reply_that_is_no_object_is_a_script_error(
        self, fake_llm: FakeLLMServer
    ) -> None:
        from parley.exceptions import ModelServerError

        fake_llm.add_reply("not json")
        with pytest.raises(ModelServerError, match="forces the tool 'city_facts'"):
            _client(fake_llm, "anthropic", OLD_CLAUDE, max_retries=0).create(
                messages=scenarios.HI, response_format=FORMAT
            )
        (error,) = fake_llm.errors  # a script mistake, kept as a responder's exception is
        assert "not json" in str(error)
        fake_llm.errors.clear()  # seen: the fixture would fail the test on it


def test_anthropic_wire_answers_a_named_tool_choice_with_that_tool(
    fake_llm: FakeLLMServer,
) -> None:
    import anthropic

    fake_llm.add_reply('{"a": 1, "b": 2}')
    sdk = anthropic.Anthropic(base_url=fake_llm.url, api_key="k", max_retries=0)
    message = sdk.messages.create(
        model=OLD_CLAUDE,
        max_tokens=10,
        messages=[{"role": "user", "content": "hi"}],
        tools=[{"name": "add", "input_schema": {"type": "object"}}],
        tool_choice={"type": "tool", "name": "add"},
    )
    sdk.close()
    (block,) = message.content
    assert (block.type, block.name, block.input) == ("tool_use", "add", {"a": 1, "b": 2})
    assert message.stop_reason == "tool_use"


def test_cohere_beside_tools_is_told_the_schema_instead(fake_llm: FakeLLMServer) -> None:
    """Cohere refuses response_format beside tools: that turn gets the schema as an
    instruction in its system message (and the answer is still checked)."""
    fake_llm.add_reply(ANSWER)
    response = _client(fake_llm, "cohere", "command-a-03-2025").create(
        messages=scenarios.HI, tools=[ADD], response_format=FORMAT
    )
    (request,) = fake_llm.received
    assert "response_format" not in request.json
    assert [t["function"]["name"] for t in request.json["tools"]] == ["add"]
    system = request.chat["messages"][0]
    assert system["role"] == "system"
    assert "JSON schema, named city_facts" in system["content"]
    assert response.choices[0].message.parsed == json.loads(ANSWER)


def test_ollama_with_emulated_tools_is_told_the_schema_instead(fake_llm: FakeLLMServer) -> None:
    """Tool calls written in the text cannot be under a ``format`` schema: a turn offering
    emulated tools gets the schema as an instruction; without tools, ``format`` again."""
    client = _client(fake_llm, "ollama", "llama3.1:8b", native_tool_calls=False)
    fake_llm.add_reply(ANSWER).add_reply(ANSWER)
    response = client.create(messages=scenarios.HI, tools=[ADD], response_format=FORMAT)
    client.create(messages=scenarios.HI, response_format=FORMAT)
    with_tools, without = fake_llm.received
    assert "format" not in with_tools.json
    assert any("JSON schema, named city_facts" in m["content"] for m in with_tools.json["messages"])
    assert response.choices[0].message.parsed == json.loads(ANSWER)
    assert without.json["format"] == SCHEMA
