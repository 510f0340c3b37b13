"""OpenAIWrapper against the loopback fake server: the everyday paths, sync and async."""

from __future__ import annotations

import asyncio
import copy
import json

import pytest

from parley.io import IOScripted, IOStream
from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer
from tests._overlap import AllInFlight

HI = [{"role": "user", "content": "hi"}]


def test_create_returns_the_completion_with_cost_and_config_id(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("hello", usage={"prompt_tokens": 1000, "completion_tokens": 1000})
    client = OpenAIWrapper(config_list=fake_llm.config_list(model="gpt-4"))
    response = client.create(messages=HI)
    assert response.choices[0].message.content == "hello"
    assert response.config_id == 0
    assert response.pass_filter is True
    assert response.cost == pytest.approx(0.03 + 0.06)  # gpt-4: $0.03 / $0.06 per 1k
    assert client.extract_text_or_completion_object(response) == ["hello"]
    assert fake_llm.last_request == {"model": "gpt-4", "messages": HI}


async def test_a_create(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("async hello")
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    response = await client.a_create(messages=HI)
    assert client.extract_text_or_completion_object(response) == ["async hello"]


async def test_sync_create_inside_a_running_loop(fake_llm: FakeLLMServer) -> None:
    # What a Jupyter cell does: a sync call while the thread's event loop is running.
    fake_llm.add_reply("from a notebook")
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    assert client.create(messages=HI).choices[0].message.content == "from a notebook"


async def test_hundreds_of_concurrent_calls(fake_llm: FakeLLMServer) -> None:
    # No answer until all 200 calls are in flight: calls that queued fail after OVERLAP_TIMEOUT.
    fake_llm.responder = AllInFlight(200, lambda req: req["messages"][0]["content"])
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    responses = await asyncio.gather(
        *(client.a_create(messages=[{"role": "user", "content": str(i)}]) for i in range(200))
    )
    assert [r.choices[0].message.content for r in responses] == [str(i) for i in range(200)]


def test_tool_calls_come_back_as_message_objects(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 1, "b": 2}}])
    tools = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]
    client = OpenAIWrapper(config_list=fake_llm.config_list(), tools=tools)
    response = client.create(messages=HI)
    (message,) = client.extract_text_or_completion_object(response)
    assert message.tool_calls[0].function.name == "add"
    assert json.loads(message.tool_calls[0].function.arguments) == {"a": 1, "b": 2}
    assert fake_llm.last_request["tools"] == tools


def test_config_entry_wins_over_create_arguments(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("x")
    client = OpenAIWrapper(config_list=fake_llm.config_list(model="entry-model", temperature=0.2))
    client.create(messages=HI, model="call-model", temperature=1.5, max_tokens=7)
    assert fake_llm.last_request["model"] == "entry-model"
    assert fake_llm.last_request["temperature"] == 0.2
    assert fake_llm.last_request["max_tokens"] == 7


def test_extras_are_never_sent(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("x")
    config = fake_llm.config_list(tags=["a"], price=[0.001, 0.002], api_type="openai")
    client = OpenAIWrapper(config_list=config, cache_seed=None, allow_format_str_template=True)
    client.create(
        messages=HI, context={"x": 1}, filter_func=lambda context, response: True, agent=None
    )
    assert set(fake_llm.last_request) == {"model", "messages"}


def test_price_in_the_config_overrides_the_table(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("x", usage={"prompt_tokens": 2000, "completion_tokens": 1000})
    client = OpenAIWrapper(config_list=fake_llm.config_list(model="gpt-4", price=[0.5, 1.0]))
    assert client.create(messages=HI).cost == pytest.approx(2.0)


def test_usage_summaries_and_printing(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("a", usage={"prompt_tokens": 10, "completion_tokens": 5})
    fake_llm.add_reply("b", usage={"prompt_tokens": 20, "completion_tokens": 5})
    client = OpenAIWrapper(config_list=fake_llm.config_list(model="my-model", price=[1.0, 1.0]))
    client.create(messages=HI)
    client.create(messages=HI)
    summary = client.total_usage_summary
    assert summary is not None
    assert summary["my-model"] == {
        "cost": pytest.approx(0.04),
        "prompt_tokens": 30,
        "completion_tokens": 10,
        "total_tokens": 40,
    }
    assert client.actual_usage_summary == summary
    screen = IOScripted()
    with IOStream.set_default(screen):
        client.print_usage_summary()
    assert "my-model" in screen.text
    client.clear_usage_summary()
    assert client.total_usage_summary is None
    assert client.actual_usage_summary is None


def test_unknown_model_costs_nothing_and_warns_once(
    fake_llm: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    fake_llm.responder = lambda req: "x"
    client = OpenAIWrapper(config_list=fake_llm.config_list(model="no-such-model-xyz"))
    with caplog.at_level("WARNING"):
        costs = [client.create(messages=HI).cost for _ in range(3)]
    assert costs == [0, 0, 0]
    assert sum("no-such-model-xyz" in r.getMessage() for r in caplog.records) == 1


def test_the_callers_config_is_never_changed(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("x")
    config_list = fake_llm.config_list(api_rate_limit=100.0, temperature=0)
    llm_config = {"config_list": config_list, "cache_seed": None, "timeout": 30}
    before = copy.deepcopy(llm_config)
    client = OpenAIWrapper(**llm_config)
    client.create(messages=HI)
    assert llm_config == before


def test_stream_prints_tokens_and_returns_the_whole_message(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("one two three four", usage={"prompt_tokens": 3, "completion_tokens": 4})
    client = OpenAIWrapper(config_list=fake_llm.config_list(), stream=True)
    screen = IOScripted()
    with IOStream.set_default(screen):
        response = client.create(messages=HI)
    assert response.choices[0].message.content == "one two three four"
    assert screen.printed[:4] == ["one ", "two ", "three ", "four"]  # token by token
    assert response.usage.prompt_tokens == 3  # the usage chunk parley asked for
    assert fake_llm.last_request["stream_options"] == {"include_usage": True}


async def test_stream_tool_calls_async(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(
        "Calling.",
        tool_calls=[
            {"name": "search", "arguments": {"q": "a long query string to split in pieces"}},
            {"name": "add", "arguments": {"a": 1}},
        ],
    )
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    screen = IOScripted()
    with IOStream.set_default(screen):
        response = await client.a_create(messages=HI, stream=True)
    message = response.choices[0].message
    assert message.content == "Calling."
    assert [tc.function.name for tc in message.tool_calls] == ["search", "add"]
    assert json.loads(message.tool_calls[0].function.arguments) == {
        "q": "a long query string to split in pieces"
    }
    assert response.choices[0].finish_reason == "tool_calls"
    assert "Calling." in screen.text
