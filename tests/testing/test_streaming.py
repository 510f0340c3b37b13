"""Streamed replies (SSE) as the real openai client sees them."""

from __future__ import annotations

import json
import time
from typing import Any

import openai
import pytest

from parley.testing import FakeLLMServer

USER = [{"role": "user", "content": "hi"}]


def _collect(chunks: Any) -> dict[str, Any]:
    """Fold streamed deltas back into one message, as a streaming consumer would."""
    content: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    function_call = {"name": "", "arguments": ""}
    finish, usage, count = None, None, 0
    for chunk in chunks:
        count += 1
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            d = choice.delta
            if d.content:
                content.append(d.content)
            for tc in d.tool_calls or []:
                slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                slot["id"] += tc.id or ""
                if tc.function is not None:
                    slot["name"] += tc.function.name or ""
                    slot["arguments"] += tc.function.arguments or ""
            if d.function_call is not None:
                function_call["name"] += d.function_call.name or ""
                function_call["arguments"] += d.function_call.arguments or ""
            if choice.finish_reason:
                finish = choice.finish_reason
    return {
        "content": "".join(content),
        "calls": [calls[i] for i in sorted(calls)],
        "function_call": function_call,
        "finish": finish,
        "usage": usage,
        "chunks": count,
    }


def test_stream_text(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    text = "The quick brown fox\njumps over  the lazy dog."
    fake_llm.add_reply(text)
    got = _collect(client.chat.completions.create(model="m", messages=USER, stream=True))
    assert got["content"] == text
    assert got["finish"] == "stop"
    assert got["chunks"] > 5  # really streamed in pieces
    assert got["usage"] is None  # not asked for


async def test_stream_text_async_with_usage(
    fake_llm: FakeLLMServer, aclient: openai.AsyncOpenAI
) -> None:
    fake_llm.add_reply("one two three", usage={"prompt_tokens": 5, "completion_tokens": 3})
    stream = await aclient.chat.completions.create(
        model="m", messages=USER, stream=True, stream_options={"include_usage": True}
    )
    got = _collect([c async for c in stream])
    assert got["content"] == "one two three"
    assert (
        got["usage"].prompt_tokens,
        got["usage"].completion_tokens,
        got["usage"].total_tokens,
    ) == (5, 3, 8)


def test_stream_tool_calls(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    args = {"query": "a fairly long argument string that spans several chunks", "limit": 10}
    fake_llm.add_reply(
        tool_calls=[{"name": "search", "arguments": args}, {"name": "broken", "arguments": "{oops"}]
    )
    got = _collect(client.chat.completions.create(model="m", messages=USER, stream=True))
    assert got["finish"] == "tool_calls"
    assert [c["name"] for c in got["calls"]] == ["search", "broken"]
    assert json.loads(got["calls"][0]["arguments"]) == args
    assert got["calls"][1]["arguments"] == "{oops"
    assert all(c["id"].startswith("call_") for c in got["calls"])
    assert got["content"] == ""


async def test_stream_tool_calls_async(
    fake_llm: FakeLLMServer, aclient: openai.AsyncOpenAI
) -> None:
    fake_llm.add_reply("Let me look.", tool_calls=[{"name": "f", "arguments": {"x": 1}}])
    stream = await aclient.chat.completions.create(model="m", messages=USER, stream=True)
    got = _collect([c async for c in stream])
    assert got["content"] == "Let me look."
    assert got["calls"][0]["name"] == "f"
    assert json.loads(got["calls"][0]["arguments"]) == {"x": 1}


def test_stream_function_call(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply(
        function_call={"name": "python", "arguments": {"cell": "print('hello, world')" * 3}}
    )
    got = _collect(client.chat.completions.create(model="m", messages=USER, stream=True))
    assert got["finish"] == "function_call"
    assert got["function_call"]["name"] == "python"
    assert json.loads(got["function_call"]["arguments"]) == {"cell": "print('hello, world')" * 3}


def test_stream_several_choices(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply(choices=["alpha beta", "gamma"])
    per_choice: dict[int, str] = {}
    for chunk in client.chat.completions.create(model="m", messages=USER, stream=True):
        for choice in chunk.choices:
            per_choice[choice.index] = per_choice.get(choice.index, "") + (
                choice.delta.content or ""
            )
    assert per_choice == {0: "alpha beta", 1: "gamma"}


def test_stream_chunks_arrive_as_they_are_sent(
    fake_llm: FakeLLMServer, client: openai.OpenAI
) -> None:
    fake_llm.add_reply("a b c d", chunk_delay=0.15)
    arrivals = []
    for chunk in client.chat.completions.create(model="m", messages=USER, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            arrivals.append(time.monotonic())
    assert len(arrivals) == 4
    # paced chunks are not buffered into one write: the first arrives well before the last
    assert arrivals[-1] - arrivals[0] >= 0.3


def test_stream_dropped_mid_way(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply("never finished " * 10, drop_after_chunks=3)
    received = []
    with pytest.raises(openai.APIConnectionError):  # noqa: PT012 - the error comes while iterating
        for chunk in client.chat.completions.create(model="m", messages=USER, stream=True):
            received.append(chunk)
    assert len(received) <= 3
