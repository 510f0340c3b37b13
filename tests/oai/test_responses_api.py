"""``api_type: "responses"``: OpenAI's Responses API through the openai SDK, against the
loopback fake server's ``/v1/responses``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import openai
import pytest

import parley
from parley import AssistantAgent, GroupChat, GroupChatManager, UserProxyAgent
from parley.cache import Cache
from parley.io import IOScripted, IOStream
from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer

HI = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]


def _entry(server: FakeLLMServer, **extra: Any) -> list[dict[str, Any]]:
    return server.config_list(model="gpt-4o-mini", api_type="responses", **extra)


def _paths(server: FakeLLMServer) -> list[str]:
    return [r.path for r in server.received]


def test_text_in_and_out_through_responses(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("hello there")
    client = OpenAIWrapper(config_list=_entry(fake_llm), cache_seed=None)
    response = client.create(messages=HI, max_tokens=50, temperature=0)
    assert client.extract_text_or_completion_object(response) == ["hello there"]
    assert _paths(fake_llm) == ["/v1/responses"]
    body = fake_llm.received[0].json
    assert body["instructions"] == "Be brief."
    assert body["input"] == [{"role": "user", "content": "hi"}]
    assert body["max_output_tokens"] == 50
    assert "messages" not in body
    assert "max_tokens" not in body


def test_two_agent_chat(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("first answer").add_reply("second answer TERMINATE")
    assistant = AssistantAgent(
        "assistant", llm_config={"config_list": _entry(fake_llm), "cache_seed": None}
    )
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config=False,
        default_auto_reply="go on",
        is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
    )
    result = user.initiate_chat(assistant, message="start", silent=True)
    assert [m["content"] for m in result.chat_history] == [
        "start",
        "first answer",
        "go on",
        "second answer TERMINATE",
    ]
    second = fake_llm.received[1].json
    assert [i["role"] for i in second["input"]] == ["user", "assistant", "user"]
    assert second["input"][1]["content"] == "first answer"


def test_tool_call_round_trip(fake_llm: FakeLLMServer) -> None:
    assistant = AssistantAgent(
        "assistant", llm_config={"config_list": _entry(fake_llm), "cache_seed": None}
    )
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)

    def add(a: Annotated[int, "first"], b: Annotated[int, "second"]) -> int:
        return a + b

    parley.register_function(add, caller=assistant, executor=user, description="Add.")
    fake_llm.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 2, "b": 3}, "id": "c1"}])
    fake_llm.add_reply("5")
    user.initiate_chat(assistant, message="2+3?", max_turns=2, silent=True)
    first, second = (r.json for r in fake_llm.received)
    assert first["tools"] == [
        {
            "type": "function",
            "name": "add",
            "description": "Add.",
            "parameters": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer", "description": "first"},
                    "b": {"type": "integer", "description": "second"},
                },
                "required": ["a", "b"],
            },
        }
    ]
    assert second["input"][1:] == [
        {"type": "function_call", "call_id": "c1", "name": "add", "arguments": '{"a": 2, "b": 3}'},
        {"type": "function_call_output", "call_id": "c1", "output": "5"},
    ]


def test_streaming_echoes_deltas(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("streamed words come in pieces")
    client = OpenAIWrapper(config_list=_entry(fake_llm), cache_seed=None)
    screen = IOScripted()
    with IOStream.set_default(screen):
        response = client.create(messages=HI, stream=True)
    assert response.choices[0].message.content == "streamed words come in pieces"
    assert "streamed words come in pieces" in screen.text
    body = fake_llm.received[0].json
    assert body["stream"] is True
    assert "stream_options" not in body
    assert response.usage.prompt_tokens > 0


def test_usage_and_cost(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(
        "priced",
        usage={
            "prompt_tokens": 1000,
            "completion_tokens": 500,
            "prompt_tokens_details": {"cached_tokens": 400},
            "completion_tokens_details": {"reasoning_tokens": 200},
        },
    )
    client = OpenAIWrapper(config_list=_entry(fake_llm, price=[1.0, 2.0]), cache_seed=None)
    response = client.create(messages=HI)
    usage = response.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (1000, 500, 1500)
    assert usage.prompt_tokens_details.cached_tokens == 400
    assert usage.completion_tokens_details.reasoning_tokens == 200
    assert response.cost == pytest.approx(1.0 + 1.0)
    summary = client.total_usage_summary
    assert summary is not None
    assert summary["gpt-4o-mini"]["prompt_tokens"] == 1000


def test_reasoning_items_go_back_on_the_next_turn_only_here(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(
        "thought it through", usage={"completion_tokens_details": {"reasoning_tokens": 9}}
    )
    fake_llm.add_reply("TERMINATE")
    config_list = fake_llm.config_list(model="o4-mini", api_type="responses")
    assistant = AssistantAgent(
        "assistant", llm_config={"config_list": config_list, "cache_seed": None}
    )
    user = UserProxyAgent(
        "user", human_input_mode="NEVER", code_execution_config=False, default_auto_reply="more"
    )
    user.initiate_chat(assistant, message="think", max_turns=2, silent=True)
    second = fake_llm.received[1].json["input"]
    assert [i.get("type", i.get("role")) for i in second] == [
        "user",
        "reasoning",
        "assistant",
        "user",
    ]
    assert second[1]["encrypted_content"].startswith("fake-reasoning-of-")
    # The same history on the chat-completions path carries no reasoning key.
    chat = OpenAIWrapper(config_list=fake_llm.config_list(), cache_seed=None)
    fake_llm.add_reply("ok")
    chat.create(messages=assistant.chat_messages[user])
    assert all("parley_reasoning" not in m for m in fake_llm.requests[-1]["messages"])


def test_429_is_retried_and_400_surfaces(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_error(429, headers={"Retry-After": "0"}).add_reply("after the retry")
    client = OpenAIWrapper(config_list=_entry(fake_llm), cache_seed=None)
    assert client.create(messages=HI).choices[0].message.content == "after the retry"
    assert len(fake_llm.received) == 2
    with pytest.raises(openai.BadRequestError, match="Unknown parameter: 'logprobs'"):
        client.create(messages=HI, logprobs=True)


def test_strict_checks_refuse_bad_items(fake_llm: FakeLLMServer) -> None:
    client = OpenAIWrapper(config_list=_entry(fake_llm), cache_seed=None)
    orphan = [{"role": "tool", "tool_call_id": "nope", "content": "x"}]
    with pytest.raises(openai.BadRequestError, match="No tool call found"):
        client.create(messages=[{"role": "user", "content": "hi"}, *orphan])


def test_repeated_request_is_answered_from_the_cache(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.add_reply("cached answer")
    client = OpenAIWrapper(config_list=_entry(fake_llm))
    with Cache.disk(cache_path_root=str(tmp_path)) as cache:
        first = client.create(messages=HI, cache=cache)
        second = client.create(messages=HI, cache=cache)
    assert first.choices[0].message.content == second.choices[0].message.content == "cached answer"
    assert len(fake_llm.received) == 1


def test_group_chat_on_responses(fake_llm: FakeLLMServer) -> None:
    llm = {"config_list": _entry(fake_llm), "cache_seed": None}
    a = AssistantAgent("alice", llm_config=llm)
    b = AssistantAgent("bob", llm_config=llm)
    fake_llm.add_reply("bob speaks").add_reply("alice speaks")
    chat = GroupChat([a, b], messages=[], max_round=3, speaker_selection_method="round_robin")
    manager = GroupChatManager(chat, llm_config=llm)
    a.initiate_chat(manager, message="topic", silent=True)
    assert [m["content"] for m in chat.messages] == ["topic", "bob speaks", "alice speaks"]
    assert _paths(fake_llm) == ["/v1/responses", "/v1/responses"]
    # alice's request holds the others' turns as user messages and her own as assistant.
    roles = [i.get("role") for i in fake_llm.received[1].json["input"]]
    assert roles == ["assistant", "user"]
