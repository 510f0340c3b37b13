"""GeminiClient (``api_type`` "google"/"gemini"): the translations to and from Gemini's API, and
agents talking to FakeLLMServer's Gemini wire through the google-genai SDK."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.oai import OpenAIWrapper
from parley.oai.providers._gemini_messages import (
    clean_schema,
    finish_reason,
    generation_config,
    made_up_call_id,
    to_contents,
)
from parley.testing import FakeLLMServer

from . import scenarios

MODEL = "gemini-2.0-flash"
PNG = "data:image/png;base64,iVBORw0KGgo="


def _entry(server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
    return scenarios.entry(server, "google", MODEL, **extra)


# -- translations --------------------------------------------------------------------------


def test_system_roles_images_and_merged_turns() -> None:
    system, contents = to_contents(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "one"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "two"},
                    {"type": "image_url", "image_url": {"url": PNG}},
                ],
            },
            {"role": "assistant", "content": "three"},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "four"},
        ]
    )
    assert system == "Be brief."
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    first = contents[0]["parts"]
    assert first[:2] == [{"text": "one"}, {"text": "two"}]
    assert first[2]["inline_data"]["mime_type"] == "image/png"
    assert first[2]["inline_data"]["data"].startswith(b"\x89PNG")


def test_tool_calls_and_results_become_function_parts_named_by_their_call() -> None:
    _, contents = to_contents(
        [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                    },
                    {"id": "c2", "type": "function", "function": {"name": "time", "arguments": ""}},
                ],
            },
            {"role": "tool", "tool_call_id": "c2", "content": "noon"},
            {"role": "tool", "tool_call_id": "c1", "content": "rain"},
        ]
    )
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    calls = [p["function_call"] for p in contents[1]["parts"]]
    assert calls == [
        {"id": "c1", "name": "weather", "args": {"city": "Oslo"}},
        {"id": "c2", "name": "time", "args": {}},
    ]
    results = [p["function_response"] for p in contents[2]["parts"]]
    assert results == [
        {"id": "c2", "name": "time", "response": {"result": "noon"}},
        {"id": "c1", "name": "weather", "response": {"result": "rain"}},
    ]


def test_a_tool_result_without_its_call_is_refused() -> None:
    with pytest.raises(ValueError, match="answers no tool call"):
        to_contents([{"role": "tool", "tool_call_id": "nope", "content": "x"}])


_roles = st.sampled_from(["user", "assistant", "system"])
_texts = st.text(min_size=0, max_size=5)


@given(st.lists(st.tuples(_roles, _texts), max_size=12))
def test_merged_turns_alternate_and_keep_every_text(messages: list[tuple[str, str]]) -> None:
    _, contents = to_contents([{"role": r, "content": t} for r, t in messages])
    roles = [c["role"] for c in contents]
    assert all(a != b for a, b in itertools.pairwise(roles))
    assert all(c["parts"] for c in contents)
    texts = [p["text"] for c in contents for p in c["parts"]]
    assert texts == [t for r, t in messages if r != "system" and t]


@given(
    st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=6, unique=True), st.randoms()
)
def test_every_tool_result_is_named_after_its_call(names: list[str], rnd: Any) -> None:
    calls = [
        {"id": f"id-{n}", "type": "function", "function": {"name": f"fn_{n}", "arguments": "{}"}}
        for n in names
    ]
    answered = list(calls)
    rnd.shuffle(answered)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        *({"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in answered),
    ]
    _, contents = to_contents(messages)
    for part in contents[-1]["parts"]:
        response = part["function_response"]
        assert response["name"] == "fn_" + response["id"].removeprefix("id-")


def test_schemas_lose_what_gemini_rejects_but_keep_property_names() -> None:
    schema = {
        "type": "object",
        "title": "Args",
        "additionalProperties": False,
        "properties": {
            "title": {"type": "string", "title": "Title", "default": "x"},
            "tags": {"type": "array", "items": {"type": "string", "title": "Tag"}},
            "when": {"anyOf": [{"type": "string", "title": "W"}, {"type": "null"}]},
        },
        "required": ["title"],
    }
    assert clean_schema(schema) == {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "when": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["title"],
    }


def test_parameters_under_autogens_names() -> None:
    params = {
        "temperature": 0.2,
        "top_p": 0.9,
        "top_k": 5,
        "max_tokens": 100,
        "stop": "END",
        "seed": 7,
        "response_mime_type": "application/json",
        "safety_settings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
        "tools": [
            {
                "type": "function",
                "function": {"name": "f", "parameters": {"type": "object", "properties": {}}},
            }
        ],
        "tool_choice": "required",
    }
    config = generation_config(params, "sys")
    assert config["max_output_tokens"] == 100
    assert config["stop_sequences"] == ["END"]
    assert config["system_instruction"] == "sys"
    assert config["safety_settings"] == params["safety_settings"]
    assert config["tool_config"] == {"function_calling_config": {"mode": "ANY"}}
    assert config["tools"][0]["function_declarations"][0]["name"] == "f"
    assert {config[k] for k in ("temperature", "top_p", "top_k", "seed")} == {0.2, 0.9, 5, 7}


def test_finish_reasons_and_made_up_ids() -> None:
    assert finish_reason("STOP", False) == "stop"
    assert finish_reason("MAX_TOKENS", False) == "length"
    assert finish_reason("SAFETY", False) == "content_filter"
    assert finish_reason("STOP", True) == "tool_calls"
    assert finish_reason(None, False) == "stop"
    one = made_up_call_id("r", 0, "f", {"a": 1})
    assert one == made_up_call_id("r", 0, "f", {"a": 1})
    assert one != made_up_call_id("r", 1, "f", {"a": 1})


# -- through the SDK -------------------------------------------------------------------------


def test_two_agents_chat(fake_llm: FakeLLMServer) -> None:
    scenarios.two_agents_with_system_messages(fake_llm, _entry(fake_llm))
    body = fake_llm.received[1].json
    assert body["systemInstruction"]["parts"] == [{"text": "You are Alice."}]
    assert [c["role"] for c in body["contents"]] == ["model", "user"]


def test_tool_call_round_trip(fake_llm: FakeLLMServer) -> None:
    second = scenarios.tool_round_trip_registered_by_decorators(fake_llm, _entry(fake_llm))
    declared = fake_llm.received[0].json["tools"][0]["functionDeclarations"][0]
    assert declared["name"] == "add"
    contents = second.json["contents"]
    call = contents[1]["parts"][0]["functionCall"]
    assert (call["name"], call["args"]) == ("add", {"a": 1, "b": 2})
    response = contents[2]["parts"][0]["functionResponse"]
    assert response["name"] == "add"
    assert response["response"] == {"result": "3"}


def test_request_parameters_reach_gemini(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    safety = [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]
    config = _entry(fake_llm, temperature=0.3, max_tokens=50, stop=["X"], safety_settings=safety)
    original = json.dumps(config, sort_keys=True)
    OpenAIWrapper(config_list=[config], cache_seed=None).create(messages=scenarios.HI)
    assert json.dumps(config, sort_keys=True) == original  # the caller's dict is untouched
    body = fake_llm.received[0].json
    assert body["generationConfig"]["maxOutputTokens"] == 50
    assert body["generationConfig"]["stopSequences"] == ["X"]
    assert body["safetySettings"] == safety
    assert fake_llm.received[0].headers["x-goog-api-key"] == config["api_key"]


def test_a_bad_request_is_not_retried_and_keeps_the_key_out(fake_llm: FakeLLMServer) -> None:
    from parley.exceptions import BadRequestError

    fake_llm.add_error(400, "bad contents")
    config = _entry(fake_llm)
    with pytest.raises(BadRequestError, match="bad contents") as raised:
        OpenAIWrapper(config_list=[config], cache_seed=None).create(messages=scenarios.HI)
    assert config["api_key"] not in str(raised.value)
    assert len(fake_llm.received) == 1


class TestGemini(scenarios.ProviderScenarios):
    API_TYPE = "google"
    MODEL = MODEL
    PRICE = (0.0001, 0.0004)
    SDK = "google.genai"
    PROTOCOL = "gemini"

    def test_streaming_echoes_the_text(self, fake_llm: FakeLLMServer) -> None:
        super().test_streaming_echoes_the_text(fake_llm)
        assert fake_llm.received[0].path.endswith(":streamGenerateContent")
