"""OllamaClient (``api_type`` "ollama"): messages and options, tool-call emulation, and agents
talking to FakeLLMServer's Ollama wire through the ollama SDK."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.oai import OpenAIWrapper
from parley.oai.providers._messages import FunctionSpec
from parley.oai.providers._ollama_messages import options, to_messages
from parley.oai.providers._ollama_tools import (
    STEP_ONE,
    STEP_TWO,
    parse_tool_calls,
    should_hide_tools,
)
from parley.testing import FakeLLMServer

from . import scenarios

MODEL = "llama3.1:8b"
ADD = FunctionSpec("add", "Add two integers.", {"type": "object", "properties": {}})
CALL = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}
TALK: list[dict[str, Any]] = [
    {"role": "system", "content": "sys"},
    {"role": "user", "content": "add"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "2"},
]


def _entry(server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
    return scenarios.entry(server, "ollama", MODEL, **extra)


# -- translations --------------------------------------------------------------------------


def test_options_under_autogens_names() -> None:
    params = {"max_tokens": 10, "num_ctx": 4096, "repeat_penalty": 1.1, "seed": 3, "stop": "X"}
    params |= {"temperature": 0.1, "top_k": 4, "top_p": 0.5, "model": "m"}
    assert options(params) == {
        "num_predict": 10,
        "num_ctx": 4096,
        "repeat_penalty": 1.1,
        "seed": 3,
        "stop": ["X"],
        "temperature": 0.1,
        "top_k": 4,
        "top_p": 0.5,
    }


def test_native_messages_keep_tool_calls_and_name_results() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    out = to_messages(
        [*TALK, {"role": "user", "content": [{"type": "text", "text": "see"}, image]}]
    )
    assert out[0] == {"role": "system", "content": "sys"}
    assert out[2]["tool_calls"] == [{"function": {"name": "add", "arguments": {"a": 1}}}]
    assert out[3] == {"role": "tool", "content": "2", "tool_name": "add"}
    assert out[4] == {"role": "user", "content": "see", "images": ["iVBORw0KGgo="]}


def test_emulated_messages_describe_tools_and_report_results_as_text() -> None:
    out = to_messages(TALK, [ADD], emulate=True)
    assert out[0]["content"].startswith("sys\n\nYou are to follow a strict two step process")
    assert '"name": "add"' in out[0]["content"]
    assert out[1]["content"] == "add"
    assert json.loads(out[2]["content"]) == [{"name": "add", "arguments": {"a": 1}}]
    assert "tool_calls" not in out[2]
    assert out[3] == {"role": "user", "content": "The result of calling add: 2" + STEP_TWO}
    first = to_messages(TALK[:2], [ADD], emulate=True)
    assert first[-1]["content"] == "add" + STEP_ONE


def test_hide_tools() -> None:
    other = FunctionSpec("sub", "", {})
    assert not should_hide_tools(TALK, [ADD, other], "never")
    assert should_hide_tools(TALK, [ADD, other], "if_any_run")
    assert not should_hide_tools(TALK, [ADD, other], "if_all_run")
    assert should_hide_tools(TALK, [ADD], "if_all_run")
    with pytest.raises(ValueError, match="hide_tools"):
        should_hide_tools(TALK, [ADD], "sometimes")


@pytest.mark.parametrize(
    "reply",
    [
        '[{"name": "add", "arguments": {"a": 1, "b": 2}}]',
        'Sure!\n```json\n[{"name": "add", "arguments": {"a": 1, "b": 2}}]\n```\nDone.',
        '{"name": "add", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}',
        'I use {braces} first, then {"name": "add", "arguments": {"a": 1, "b": 2}}',
    ],
)
def test_a_json_reply_is_read_as_tool_calls(reply: str) -> None:
    assert parse_tool_calls(reply, ["add"]) == [("add", {"a": 1, "b": 2})]


def test_text_and_unknown_functions_are_not_tool_calls() -> None:
    assert parse_tool_calls("The sum is 3.", ["add"]) == []
    assert parse_tool_calls('[{"name": "rm", "arguments": {}}]', ["add"]) == []
    assert parse_tool_calls('{"a": 1}', ["add"]) == []


@given(
    st.text(max_size=20).filter(lambda t: "[" not in t and "{" not in t),
    st.dictionaries(st.sampled_from("abc"), st.integers(), max_size=3),
)
def test_calls_are_found_whatever_text_surrounds_them(prose: str, args: dict[str, int]) -> None:
    reply = f"{prose}{json.dumps([{'name': 'add', 'arguments': args}])}{prose}"
    assert parse_tool_calls(reply, ["add"]) == [("add", args)]


# -- through the SDK -------------------------------------------------------------------------


def test_two_agents_chat(fake_llm: FakeLLMServer) -> None:
    scenarios.two_agents_with_system_messages(fake_llm, _entry(fake_llm))
    body = fake_llm.received[1].json
    assert body["messages"][0] == {"role": "system", "content": "You are Alice."}
    assert body["stream"] is False


def test_tool_call_round_trip(fake_llm: FakeLLMServer) -> None:
    second = scenarios.tool_round_trip_registered_by_decorators(fake_llm, _entry(fake_llm))
    assert fake_llm.received[0].json["tools"][0]["function"]["name"] == "add"
    messages = second.json["messages"]
    assert messages[2]["tool_calls"][0]["function"] == {
        "name": "add",
        "arguments": {"a": 1, "b": 2},
    }
    assert messages[3] == {"role": "tool", "content": "3", "tool_name": "add"}


def test_emulated_tool_call_round_trip(fake_llm: FakeLLMServer) -> None:
    config = _entry(fake_llm, native_tool_calls=False, hide_tools="if_any_run")
    fake_llm.add_reply('Calling: [{"name": "add", "arguments": {"a": 1, "b": 2}}]')
    fake_llm.add_reply("The sum is 3. TERMINATE")
    assistant, user = scenarios.tool_agents(config)
    result = user.initiate_chat(assistant, message="What is 1 + 2?", silent=True)
    history = result.chat_history or []
    assert history[1]["tool_calls"][0]["function"]["arguments"] == '{"a": 1, "b": 2}'
    assert history[2]["content"] == "3"
    assert history[-1]["content"] == "The sum is 3. TERMINATE"
    first, second = (r.json for r in fake_llm.received)
    assert not first.get("tools")
    assert not second.get("tools")
    assert '"name": "add"' in first["messages"][0]["content"]
    assert first["messages"][-1]["content"] == "What is 1 + 2?" + STEP_ONE
    # The tool ran, so hide_tools="if_any_run" stops offering it.
    assert "two step process" not in second["messages"][0]["content"]
    assert second["messages"][-1] == {
        "role": "user",
        "content": "The result of calling add: 3" + STEP_TWO,
    }


def test_options_reach_ollama(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    config = _entry(fake_llm, num_ctx=2048, max_tokens=20, temperature=0.5)
    OpenAIWrapper(config_list=[config], cache_seed=None).create(messages=scenarios.HI)
    assert fake_llm.received[0].json["options"] == {
        "num_ctx": 2048,
        "num_predict": 20,
        "temperature": 0.5,
    }


class TestOllama(scenarios.ProviderScenarios):
    API_TYPE = "ollama"
    MODEL = MODEL
    PRICE = (0.0, 0.0)  # local models cost nothing but a config's price
    SDK = "ollama"
    PROTOCOL = "ollama"
