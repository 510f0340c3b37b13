"""Typed structured output through ``OpenAIWrapper``: ``response_format`` as a pydantic model,
a JSON-schema dict, OpenAI's and AG2's forms, per call and per config; replies validated,
retried with the problems shown, then ``StructuredOutputError``; the cache keyed by the schema;
the Responses API's ``text.format``; a prompted custom client told the schema instead."""

from __future__ import annotations

import copy
import json
from typing import Any, Literal

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from parley.cache import Cache
from parley.exceptions import ConfigError, StructuredOutputError
from parley.oai import OpenAIWrapper, OutputSchema
from parley.oai.openai_utils import get_key
from parley.testing import FakeLLMServer

HI = [{"role": "system", "content": "You extract people."}, {"role": "user", "content": "Ann, 31"}]


class Person(BaseModel):
    name: str
    age: int


PERSON_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
}


def _client(server: FakeLLMServer, **extra: Any) -> OpenAIWrapper:
    return OpenAIWrapper(config_list=server.config_list(model="gpt-4o-mini", **extra))


def _sent_format(server: FakeLLMServer, i: int = 0) -> Any:
    return server.received[i].json.get("response_format")


def test_pydantic_model_per_call(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply('{"name": "Ann", "age": 31}')
    response = _client(fake_llm).create(messages=HI, response_format=Person)
    parsed = response.choices[0].message.parsed
    assert parsed == Person(name="Ann", age=31)
    assert response.choices[0].message.content == '{"name": "Ann", "age": 31}'
    sent = _sent_format(fake_llm)
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["name"] == "Person"
    assert sent["json_schema"]["strict"] is True
    assert sent["json_schema"]["schema"]["additionalProperties"] is False
    assert sent["json_schema"]["schema"]["required"] == ["name", "age"]


def test_dict_schema_is_plain_python_and_callers_dict_unchanged(fake_llm: FakeLLMServer) -> None:
    schema = copy.deepcopy(PERSON_SCHEMA)
    fake_llm.add_reply('{"name": "Ann", "age": 31}')
    response = _client(fake_llm).create(messages=HI, response_format=schema)
    assert response.choices[0].message.parsed == {"name": "Ann", "age": 31}
    assert schema == PERSON_SCHEMA  # strict mode was added to a copy
    sent = _sent_format(fake_llm)["json_schema"]
    assert sent["name"] == "response_format"  # AG2's name for a bare schema
    assert sent["schema"]["additionalProperties"] is False


def test_openai_form_keeps_name_and_strict_choice(fake_llm: FakeLLMServer) -> None:
    given_format = {
        "type": "json_schema",
        "json_schema": {"name": "person", "schema": PERSON_SCHEMA, "strict": False},
    }
    fake_llm.add_reply('{"name": "Ann", "age": 31}')
    response = _client(fake_llm).create(messages=HI, response_format=given_format)
    assert response.choices[0].message.parsed == {"name": "Ann", "age": 31}
    sent = _sent_format(fake_llm)["json_schema"]
    assert sent == {"name": "person", "schema": PERSON_SCHEMA, "strict": False}


def test_free_form_schema_is_sent_without_strict(fake_llm: FakeLLMServer) -> None:
    scores = {"type": "object", "additionalProperties": {"type": "integer"}}
    fake_llm.add_reply('{"a": 1, "b": 2}')
    response = _client(fake_llm).create(messages=HI, response_format=scores)
    assert response.choices[0].message.parsed == {"a": 1, "b": 2}
    assert _sent_format(fake_llm)["json_schema"]["strict"] is False


def test_llm_config_entry_form_and_json_object_passthrough(fake_llm: FakeLLMServer) -> None:
    client = _client(fake_llm, response_format=Person)
    fake_llm.add_reply('{"name": "Bo", "age": 7}')
    assert client.create(messages=HI).choices[0].message.parsed == Person(name="Bo", age=7)
    # json_object is not a schema: sent as given, nothing parsed
    fake_llm.add_reply('{"anything": true}')
    plain = _client(fake_llm).create(messages=HI, response_format={"type": "json_object"})
    assert _sent_format(fake_llm, 0)["json_schema"]["name"] == "Person"
    assert _sent_format(fake_llm, 1) == {"type": "json_object"}
    assert getattr(plain.choices[0].message, "parsed", None) is None


def test_invalid_reply_is_retried_with_the_error_shown(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply('{"name": "Ann", "age": "thirty-one"}')
    fake_llm.add_reply('{"name": "Ann", "age": 31}')
    client = _client(fake_llm)
    response = client.create(messages=HI, response_format=Person)
    assert response.choices[0].message.parsed == Person(name="Ann", age=31)
    assert len(fake_llm.received) == 2
    retry = fake_llm.received[1].json["messages"]
    assert retry[: len(HI)] == HI
    assert retry[-2] == {"role": "assistant", "content": '{"name": "Ann", "age": "thirty-one"}'}
    assert retry[-1]["role"] == "user"
    assert "$.age" in retry[-1]["content"]
    assert "valid integer" in retry[-1]["content"]
    # both calls are counted
    assert client.total_usage_summary is not None
    model_usage = client.total_usage_summary[response.model]
    assert model_usage["prompt_tokens"] > response.usage.prompt_tokens


def test_retries_exhausted_raise_structured_output_error(fake_llm: FakeLLMServer) -> None:
    for _ in range(4):
        fake_llm.add_reply("Sure! Ann is 31.")
    client = _client(fake_llm, structured_output_retries=1)
    with pytest.raises(StructuredOutputError) as caught:
        client.create(messages=HI, response_format=PERSON_SCHEMA)
    error = caught.value
    assert error.schema_name == "response_format"
    assert error.raw == "Sure! Ann is 31."
    assert error.attempts == 2
    assert any("not JSON" in e for e in error.errors)
    assert "Sure! Ann is 31." in str(error)
    assert len(fake_llm.received) == 2  # one retry, as configured
    assert fake_llm.pending == 2


def test_default_retry_limit_is_two(fake_llm: FakeLLMServer) -> None:
    for _ in range(3):
        fake_llm.add_reply('{"name": "Ann"}')
    with pytest.raises(StructuredOutputError, match="'age' is a required property"):
        _client(fake_llm).create(messages=HI, response_format=PERSON_SCHEMA)
    assert len(fake_llm.received) == 3


def test_tool_call_reply_is_not_validated(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(tool_calls=[{"name": "lookup", "arguments": {"who": "Ann"}, "id": "c1"}])
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    response = _client(fake_llm).create(messages=HI, tools=tools, response_format=Person)
    message = response.choices[0].message
    assert message.tool_calls[0].function.name == "lookup"
    assert getattr(message, "parsed", None) is None
    assert len(fake_llm.received) == 1


def test_cache_hit_is_validated_and_keyed_by_schema(fake_llm: FakeLLMServer, tmp_path: Any) -> None:
    class Other(BaseModel):
        name: str
        mood: Literal["happy", "sad"]

    fake_llm.add_reply('{"name": "Ann", "age": "x"}').add_reply('{"name": "Ann", "age": 31}')
    with Cache.disk(cache_path_root=str(tmp_path)) as cache:
        first = _client(fake_llm).create(messages=HI, response_format=Person, cache=cache)
        again = _client(fake_llm).create(messages=HI, response_format=Person, cache=cache)
        assert len(fake_llm.received) == 2  # the second create: both requests from the cache
        assert again.choices[0].message.parsed == first.choices[0].message.parsed
        assert isinstance(again.choices[0].message.parsed, Person)
        fake_llm.add_reply('{"name": "Ann", "mood": "happy"}')
        other = _client(fake_llm).create(messages=HI, response_format=Other, cache=cache)
        assert len(fake_llm.received) == 3  # another schema: another key
        assert other.choices[0].message.parsed.mood == "happy"


def test_cache_key_includes_the_schema() -> None:
    a = OutputSchema.of(Person)
    b = OutputSchema.of(PERSON_SCHEMA)
    assert a is not None
    assert b is not None
    key_a = get_key({"messages": HI, "response_format": a.response_format()})
    key_b = get_key({"messages": HI, "response_format": b.response_format()})
    assert key_a != key_b


def test_responses_api_sends_text_format(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("not json").add_reply('{"name": "Ann", "age": 31}')
    client = OpenAIWrapper(
        config_list=fake_llm.config_list(model="gpt-4o-mini", api_type="responses")
    )
    response = client.create(messages=HI, response_format=Person)
    assert response.choices[0].message.parsed == Person(name="Ann", age=31)
    first, second = (r.json for r in fake_llm.received)
    assert fake_llm.received[0].path == "/v1/responses"
    text_format = first["text"]["format"]
    assert text_format["type"] == "json_schema"
    assert text_format["name"] == "Person"
    assert text_format["strict"] is True
    assert text_format["schema"]["required"] == ["name", "age"]
    assert "response_format" not in first
    assert second["input"][-2]["content"] == "not json"
    assert "not match the JSON schema Person" in second["input"][-1]["content"]


class PlainClient:
    """A custom model client with no structured output of its own (so: prompted). It asks the
    fake server through the real openai SDK, sending exactly what it is given."""

    def __init__(self, config: dict[str, Any], **kwargs: Any) -> None:
        self._sdk = openai.OpenAI(base_url=config["base_url"], api_key="sk-x", max_retries=0)

    def create(self, params: dict[str, Any]) -> Any:
        return self._sdk.chat.completions.create(
            model=params["model"], messages=params["messages"], **_extra(params)
        )

    def message_retrieval(self, response: Any) -> list[Any]:
        return [c.message.content for c in response.choices]

    def cost(self, response: Any) -> float:
        return 0.0

    @staticmethod
    def get_usage(response: Any) -> dict[str, Any]:
        return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "cost": 0.0}


def _extra(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k == "response_format"}


def test_prompted_custom_client_gets_the_instruction(fake_llm: FakeLLMServer) -> None:
    config = {
        "model": "house-model",
        "base_url": fake_llm.base_url,
        "model_client_cls": "PlainClient",
    }
    client = OpenAIWrapper(config_list=[config])
    client.register_model_client(PlainClient)
    fake_llm.add_reply('```json\n{"name": "Ann", "age": 31}\n```')
    response = client.create(messages=HI, response_format=Person)
    assert response.choices[0].message.parsed == Person(name="Ann", age=31)
    body = fake_llm.received[0].json
    assert "response_format" not in body
    system = body["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith("You extract people.\n\n")
    assert "JSON schema, named Person" in system["content"]
    assert '"required": ["name", "age"]' in system["content"]
    assert HI[0]["content"] == "You extract people."  # the caller's message unchanged


def test_bad_response_format_is_a_config_error(fake_llm: FakeLLMServer) -> None:
    with pytest.raises(ConfigError, match=r"config_list\[0\]: response_format"):
        _client(fake_llm, response_format=42)
    with pytest.raises(ConfigError, match="needs a schema dict"):
        _client(fake_llm).create(messages=HI, response_format={"type": "json_schema"})


def test_direct_validate_reports_where() -> None:
    schema = OutputSchema.of(PERSON_SCHEMA)
    assert schema is not None
    with pytest.raises(StructuredOutputError) as caught:
        schema.validate('{"name": 3, "age": -1, "extra": 1}')
    assert caught.value.errors == [
        "$.name: 3 is not of type 'string'",
        "$.age: -1 is less than the minimum of 0",
    ]


# Keywords a partial validator could skip and so accept a wrong object: the jsonschema library
# enforces each (schema, a reply that violates it, the problem reported).
_PERSON_DEFS = {
    "$defs": {
        "person": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        }
    },
    "type": "object",
    "properties": {"people": {"type": "array", "items": {"$ref": "#/$defs/person"}}},
}
VIOLATIONS: list[tuple[dict[str, Any], str, str]] = [
    ({"type": "string", "pattern": "^[A-Z]{3}$"}, '"usd"', "$: 'usd' does not match '^[A-Z]{3}$'"),
    ({"type": "array", "minItems": 2}, "[1]", "$: [1] is too short (minItems 2)"),
    (
        {"oneOf": [{"type": "integer"}, {"type": "number"}]},
        "3",
        "$: 3 is valid under each of",
    ),
    (_PERSON_DEFS, '{"people": [{"name": "Ann"}, {}]}', "$.people[1]: 'name' is a required"),
    (
        {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}},
        '{"Bad": 1}',
        "$: 'Bad' does not match '^[a-z]+$'",
    ),
    (
        {"type": "object", "dependentRequired": {"card": ["cvv"]}},
        '{"card": "4111"}',
        "$: 'cvv' is a dependency of 'card'",
    ),
    (
        {"type": "array", "contains": {"const": 1}, "minContains": 2},
        "[1, 2]",
        "$: Too few items match the given schema (expected at least 2 but only 1 matched)",
    ),
    (
        {"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["a"]}},
        '{"kind": "a"}',
        "$: 'a' is a required property",
    ),
    (
        {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 10}]},
        "3",
        "(option 1: $: 3 is not of type 'string'; option 2: $: 3 is less than the minimum of 10)",
    ),
    (
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "array",
            "items": [{"type": "string"}],
        },
        "[1]",
        "$[0]: 1 is not of type 'string'",
    ),
]


@pytest.mark.parametrize(
    ("schema", "reply", "problem"), VIOLATIONS, ids=[str(i) for i in range(len(VIOLATIONS))]
)
def test_every_keyword_of_a_schema_dict_is_enforced(
    schema: dict[str, Any], reply: str, problem: str
) -> None:
    typed = OutputSchema.of(schema)
    assert typed is not None
    with pytest.raises(StructuredOutputError) as caught:
        typed.validate(reply)
    assert any(problem in line for line in caught.value.errors), caught.value.errors


def test_a_violation_of_an_unfamiliar_keyword_is_retried(fake_llm: FakeLLMServer) -> None:
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}}
    fake_llm.add_reply('{"code": "usd"}')
    fake_llm.add_reply('{"code": "USD"}')
    response = _client(fake_llm).create(messages=HI, response_format=schema)
    assert response.choices[0].message.parsed == {"code": "USD"}
    retry = fake_llm.received[1].json["messages"][-1]["content"]
    assert "$.code: 'usd' does not match '^[A-Z]{3}$'" in retry


def test_format_is_an_annotation_unless_checking_is_asked() -> None:
    schema = {"type": "string", "format": "date"}
    plain = OutputSchema.of(schema)
    assert plain is not None
    assert plain.validate('"not a date"') == "not a date"
    checked = OutputSchema.of(schema, check_formats=True)
    assert checked is not None
    assert checked != plain
    assert checked.validate('"2026-01-31"') == "2026-01-31"
    with pytest.raises(StructuredOutputError, match="is not a 'date'"):
        checked.validate('"not a date"')


def test_problems_are_capped() -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    typed = OutputSchema.of(schema)
    assert typed is not None
    with pytest.raises(StructuredOutputError) as caught:
        typed.validate(json.dumps(["x"] * 14))
    errors = caught.value.errors
    assert len(errors) == 11
    assert errors[:2] == [
        "$[0]: 'x' is not of type 'integer'",
        "$[1]: 'x' is not of type 'integer'",
    ]
    assert errors[-1] == "... and 4 more problems"


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "nonsense"}, r"not a valid JSON schema: \$\.type: 'nonsense'"),
        ({"type": "array", "minItems": -1}, r"\$\.minItems: -1 is less than the minimum of 0"),
    ],
)
def test_an_invalid_schema_dict_is_a_config_error(schema: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        OutputSchema.of(schema)


def test_a_remote_ref_is_never_fetched() -> None:
    typed = OutputSchema.of({"$ref": "https://example.com/schema.json"})
    assert typed is not None
    with pytest.raises(ConfigError, match=r"cannot be resolved.*example\.com/schema\.json"):
        typed.validate("1")


_json_leaf = st.one_of(
    st.just({"type": "string"}),
    st.just({"type": "integer", "minimum": 0}),
    st.just({"type": "boolean"}),
    st.just({"type": "number", "default": 1.5}),
)
_schemas = st.recursive(
    _json_leaf,
    lambda inner: st.one_of(
        st.builds(
            lambda props: {"type": "object", "properties": props},
            st.dictionaries(st.text("abcxyz", min_size=1, max_size=4), inner, max_size=3),
        ),
        st.builds(lambda items: {"type": "array", "items": items}, inner),
        st.builds(lambda options: {"anyOf": options}, st.lists(inner, min_size=1, max_size=2)),
    ),
    max_leaves=6,
)


@settings(max_examples=80, deadline=None)
@given(
    st.builds(
        lambda p: {"type": "object", "properties": p},
        st.dictionaries(st.text("abc", min_size=1, max_size=3), _schemas, max_size=3),
    )
)
def test_normalising_never_mutates_and_is_idempotent(schema: dict[str, Any]) -> None:
    before = json.dumps(schema, sort_keys=True)
    once = OutputSchema.of(schema)
    assert json.dumps(schema, sort_keys=True) == before
    assert once is not None
    assert OutputSchema.of(once) is once
    again = OutputSchema.of(once.response_format())
    assert again is not None
    assert again.response_format() == once.response_format()
    sent = once.response_format()["json_schema"]
    if sent["strict"]:
        _assert_strict(sent["schema"])


def _assert_strict(node: Any) -> None:
    if not isinstance(node, dict):
        return
    if "properties" in node:
        assert node["additionalProperties"] is False
        assert node["required"] == list(node["properties"])
    assert "default" not in node
    for value in node.values():
        if isinstance(value, dict):
            for sub in [value, *value.values()]:
                _assert_strict(sub)
        elif isinstance(value, list):
            for sub in value:
                _assert_strict(sub)
