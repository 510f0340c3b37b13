"""Provider prompt caching: Anthropic breakpoints placed by ``"prompt_cache": true`` (read
back from the fake server's request log, sent by the real anthropic SDK), their counts and
price, OpenAI's ``prompt_cache_key`` on the wire, and the placement's invariants."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parley as autogen
from parley.exceptions import BadRequestError, ConfigError
from parley.oai import OpenAIWrapper
from parley.oai._cost import compute_cost
from parley.oai.providers._anthropic_cache import MAX_BREAKPOINTS, place_breakpoints
from parley.testing import FakeLLMServer

MODEL = "claude-sonnet-4-20250514"
SYSTEM = "You are a careful assistant. " * 40  # a long, stable system prompt
EPHEMERAL = {"type": "ephemeral"}


def _entry(server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
    return server.config_list(MODEL, api_type="anthropic", cache_seed=None, **extra)[0]


def _marks(body: dict[str, Any]) -> list[tuple[str, Any]]:
    """Where the request's cache_control marks are: (place, mark)."""
    out: list[tuple[str, Any]] = []
    for i, tool in enumerate(body.get("tools") or ()):
        if "cache_control" in tool:
            out.append((f"tools.{i}", tool["cache_control"]))
    system = body.get("system")
    for i, block in enumerate(system if isinstance(system, list) else ()):
        if "cache_control" in block:
            out.append((f"system.{i}", block["cache_control"]))
    for i, message in enumerate(body["messages"]):
        content = message["content"]
        for j, block in enumerate(content if isinstance(content, list) else ()):
            if "cache_control" in block:
                out.append((f"messages.{i}.content.{j}", block["cache_control"]))
    return out


def _history(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for n in range(turns):
        messages.append({"role": "user", "content": f"question {n}: " + "tell me more. " * 30})
        messages.append({"role": "assistant", "content": f"answer {n}: " + "here it is. " * 30})
    messages.append({"role": "user", "content": "and the last question?"})
    return messages


TOOL = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two ints.",
        "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
    },
}


def test_breakpoints_on_system_history_and_last_tool(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    client = OpenAIWrapper(config_list=[_entry(fake_llm, prompt_cache=True)])
    messages = _history(2)
    sent = copy.deepcopy(messages)
    client.create(messages=sent, tools=[TOOL])
    assert sent == messages  # the caller's messages are not changed
    body = fake_llm.requests[0]
    assert _marks(body) == [
        ("tools.0", EPHEMERAL),
        ("system.0", EPHEMERAL),
        ("messages.3.content.0", EPHEMERAL),  # the last message before the newest turn
    ]
    assert body["system"][0]["text"] == SYSTEM
    assert body["messages"][3]["role"] == "assistant"


def test_without_prompt_cache_nothing_is_marked(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    OpenAIWrapper(config_list=[_entry(fake_llm)]).create(messages=_history(2), tools=[TOOL])
    body = fake_llm.requests[0]
    assert _marks(body) == []
    assert body["system"] == SYSTEM


def test_one_hour_ttl(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    entry = _entry(fake_llm, prompt_cache=True, prompt_cache_ttl="1h")
    response = OpenAIWrapper(config_list=[entry]).create(messages=_history(1))
    marks = _marks(fake_llm.requests[0])
    assert [m for _, m in marks] == [{"type": "ephemeral", "ttl": "1h"}] * 2
    details = response.usage.prompt_tokens_details
    assert details.cache_creation_tokens == details.cache_creation_1h_tokens > 0


def test_users_own_breakpoints_are_kept_and_count_towards_four(fake_llm: FakeLLMServer) -> None:
    mine = {"type": "ephemeral"}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": [{"type": "text", "text": "doc one", "cache_control": mine}]},
        {"role": "assistant", "content": "read it"},
        {"role": "user", "content": [{"type": "text", "text": "doc two", "cache_control": mine}]},
        {"role": "assistant", "content": "read that too"},
        {"role": "user", "content": [{"type": "text", "text": "doc 3", "cache_control": mine}]},
        {"role": "assistant", "content": "and that"},
        {"role": "user", "content": "compare them"},
    ]
    fake_llm.add_reply("ok")
    entry = _entry(fake_llm, prompt_cache=True)
    OpenAIWrapper(config_list=[entry]).create(messages=messages, tools=[TOOL])
    body = fake_llm.requests[0]
    places = [place for place, _ in _marks(body)]
    # Three of the caller's own, and room for one more: the system prompt comes first.
    assert places == [
        "system.0",
        "messages.0.content.0",
        "messages.2.content.0",
        "messages.4.content.0",
    ]
    assert len(places) == MAX_BREAKPOINTS


def test_fifth_breakpoint_gets_anthropics_error(fake_llm: FakeLLMServer) -> None:
    mine = {"type": "ephemeral"}
    content = [{"type": "text", "text": f"part {n}", "cache_control": mine} for n in range(5)]
    entry = _entry(fake_llm, max_retries=0)
    with pytest.raises(BadRequestError) as raised:
        OpenAIWrapper(config_list=[entry]).create(messages=[{"role": "user", "content": content}])
    assert "A maximum of 4 blocks with cache_control may be provided. Found 5." in str(raised.value)


def test_empty_text_block_cannot_carry_a_breakpoint(fake_llm: FakeLLMServer) -> None:
    import anthropic

    client = anthropic.Anthropic(base_url=fake_llm.url, api_key="k", max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="empty text blocks"):
        client.messages.create(
            model=MODEL,
            max_tokens=10,
            messages=[
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "", "cache_control": EPHEMERAL}],
                }
            ],
        )


def _chat(server: FakeLLMServer, **extra: Any) -> autogen.ChatResult:
    server.add(*["Hello, what do you need?", "Here is the plan. TERMINATE"])
    config = {"config_list": [_entry(server, **extra)], "cache_seed": None}
    assistant = autogen.AssistantAgent("assistant", system_message=SYSTEM, llm_config=config)
    user = autogen.UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        max_consecutive_auto_reply=1,
        code_execution_config=False,
        default_auto_reply="Please make a plan for " + "the whole long project. " * 20,
    )
    return user.initiate_chat(assistant, message="Hi, I need a plan.", max_turns=2)


def test_second_turn_reads_the_cache_and_costs_less(fake_llm: FakeLLMServer) -> None:
    cached = _chat(fake_llm, prompt_cache=True)
    first, second = (r.json for r in fake_llm.received)
    # The first turn writes its system prompt; the second reads it and writes its history.
    usage = cached.cost["usage_including_cached_inference"][MODEL]
    assert usage["cached_tokens"] > 0
    assert usage["cache_creation_tokens"] > 0
    assert _marks(second)[-1][0] == "messages.1.content.0"
    assert first["system"] == second["system"]
    fake_llm.reset()
    plain = _chat(fake_llm)
    plain_usage = plain.cost["usage_including_cached_inference"][MODEL]
    assert "cached_tokens" not in plain_usage
    assert plain_usage["prompt_tokens"] == usage["prompt_tokens"]
    # Reads at 0.1x outweigh writes at 1.25x once the system prompt is read back.
    assert (
        cached.cost["usage_including_cached_inference"]["total_cost"]
        < (plain.cost["usage_including_cached_inference"]["total_cost"])
    )
    # parley.usage's view of the chat has the same counts.
    assert cached.usage.cached_tokens == usage["cached_tokens"]
    assert cached.usage.cache_creation_tokens == usage["cache_creation_tokens"]
    assert cached.usage.summary()[MODEL]["cached_tokens"] == usage["cached_tokens"]


def test_anthropic_cost_prices_reads_and_writes(fake_llm: FakeLLMServer) -> None:
    from parley.oai.anthropic import AnthropicClient

    fake_llm.add(*["one", "two"])
    client = OpenAIWrapper(config_list=[_entry(fake_llm, prompt_cache=True)])
    messages = _history(1)
    client.create(messages=messages)
    response = client.create(messages=messages)
    usage = response.usage
    read = usage.prompt_tokens_details.cached_tokens
    assert read > 0
    assert read <= usage.prompt_tokens
    price_in, price_out = AnthropicClient.PRICES["claude-sonnet-4"]
    written = getattr(usage.prompt_tokens_details, "cache_creation_tokens", 0) or 0
    fresh = usage.prompt_tokens - read - written
    expected = (
        fresh * price_in + read * price_in * 0.1 + written * price_in * 1.25
    ) / 1000 + usage.completion_tokens * price_out / 1000
    assert response.cost == pytest.approx(expected)


def test_streamed_reply_reports_cache_counts(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(*["one", "two"])
    client = OpenAIWrapper(config_list=[_entry(fake_llm, prompt_cache=True, stream=True)])
    client.create(messages=_history(1))
    response = client.create(messages=_history(1))
    assert response.usage.prompt_tokens_details.cached_tokens > 0


def test_prompt_cache_is_checked_and_never_sent(fake_llm: FakeLLMServer) -> None:
    with pytest.raises(ConfigError, match="prompt_cache"):
        OpenAIWrapper(config_list=[_entry(fake_llm, prompt_cache="yes")])
    with pytest.raises(ConfigError, match="prompt_cache_ttl"):
        OpenAIWrapper(config_list=[_entry(fake_llm, prompt_cache=True, prompt_cache_ttl="2h")])
    entry = fake_llm.config_list("gpt-4o", prompt_cache=True, cache_seed=None)[0]
    given = dict(entry)
    fake_llm.add_reply("ok")
    OpenAIWrapper(config_list=[entry]).create(messages=[{"role": "user", "content": "hi"}])
    assert entry == given
    assert "prompt_cache" not in fake_llm.requests[0]


# -- OpenAI -------------------------------------------------------------------------------


@pytest.mark.parametrize("api_type", [None, "responses"])
def test_openai_prompt_cache_key_is_sent(fake_llm: FakeLLMServer, api_type: Any) -> None:
    extra = {"api_type": api_type} if api_type else {}
    entry = fake_llm.config_list(
        "gpt-4o",
        prompt_cache_key="tenant-7",
        prompt_cache_retention="24h",
        cache_seed=None,
        **extra,
    )[0]
    fake_llm.add_reply("ok")
    OpenAIWrapper(config_list=[entry]).create(messages=[{"role": "user", "content": "hi"}])
    body = fake_llm.requests[0]
    assert body["prompt_cache_key"] == "tenant-7"
    assert body["prompt_cache_retention"] == "24h"


def test_openai_repeated_prefix_under_a_key_is_cached(fake_llm: FakeLLMServer) -> None:
    entry = fake_llm.config_list("gpt-4o", prompt_cache_key="k1", cache_seed=None)[0]
    client = OpenAIWrapper(config_list=[entry])
    long_prefix = _history(6)
    fake_llm.add(*["a", "b", "c"])
    first = client.create(messages=long_prefix)
    second = client.create(messages=[*long_prefix, {"role": "user", "content": "one more"}])
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    cached = second.usage.prompt_tokens_details.cached_tokens
    assert cached >= 1024
    assert (cached - 1024) % 128 == 0
    full_price = compute_cost("gpt-4o", second.usage.prompt_tokens, second.usage.completion_tokens)
    assert second.cost < full_price
    short = [{"role": "user", "content": "short"}]
    client.create(messages=short)
    assert client.total_usage_summary["gpt-4o"]["cached_tokens"] == cached


# -- the placement's invariants -----------------------------------------------------------

_text = st.text(min_size=0, max_size=12)
_mark = st.sampled_from([None, {"type": "ephemeral"}])


@st.composite
def _block(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "text", "thinking", "tool_use"]))
    if kind == "text":
        block: dict[str, Any] = {"type": "text", "text": draw(_text)}
    elif kind == "thinking":
        block = {"type": "thinking", "thinking": draw(_text), "signature": "s"}
    else:
        block = {"type": "tool_use", "id": "t", "name": "f", "input": {}}
    mark = draw(_mark)
    if mark is not None and kind != "thinking":
        block["cache_control"] = mark
    return block


@st.composite
def _bodies(draw: Any) -> dict[str, Any]:
    messages = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": draw(st.one_of(_text, st.lists(_block(), max_size=3))),
        }
        for i in range(draw(st.integers(0, 5)))
    ]
    body: dict[str, Any] = {"model": MODEL, "messages": messages}
    system = draw(st.one_of(st.none(), _text, st.lists(_block(), max_size=2)))
    if system is not None:
        body["system"] = system
    tools = draw(st.lists(st.builds(dict, name=_text), max_size=3))
    if tools:
        body["tools"] = tools
    return body


def _count(body: dict[str, Any]) -> int:
    return json.dumps(body).count('"cache_control"')


def _texts(body: dict[str, Any]) -> list[str]:
    """Every text of the request, in order, whatever its block structure."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for key, inner in value.items():
                if key != "cache_control":
                    walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    for key in ("system", "messages", "tools"):
        walk(body.get(key))
    return [t for t in out if t not in ("text", "user", "assistant")]


@settings(max_examples=300, deadline=None)
@given(_bodies(), st.sampled_from([None, "5m", "1h"]))
def test_placement_never_exceeds_four_nor_changes_text(body: dict[str, Any], ttl: Any) -> None:
    before = copy.deepcopy(body)
    placed = place_breakpoints(body, ttl)
    assert body == before  # the argument is never changed
    own = _count(body)
    assert _count(placed) <= max(MAX_BREAKPOINTS, own)
    assert _count(placed) >= own  # the caller's own are all kept
    assert _texts(placed) == _texts(body)
    assert _unmarkable_marks(placed) == _unmarkable_marks(body)


def _unmarkable_marks(body: dict[str, Any]) -> int:
    """Marks on blocks Anthropic refuses them on (thinking, empty text)."""
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    if isinstance(body.get("system"), list):
        blocks += body["system"]
    return sum(
        1
        for b in blocks
        if "cache_control" in b
        and (b["type"] == "thinking" or (b["type"] == "text" and not b["text"].strip()))
    )


@pytest.mark.parametrize("stream", [False, True])
def test_gemini_reports_its_implicit_cache_hits(fake_llm: FakeLLMServer, stream: bool) -> None:
    entry = fake_llm.config_list("gemini-2.5-flash", api_type="google", cache_seed=None)[0]
    fake_llm.add_reply("ok", usage={"prompt_tokens": 3000, "cached_tokens": 2048})
    client = OpenAIWrapper(config_list=[entry])
    response = client.create(messages=[{"role": "user", "content": "hi"}], stream=stream)
    assert response.usage.prompt_tokens_details.cached_tokens == 2048
    assert client.total_usage_summary["gemini-2.5-flash"]["cached_tokens"] == 2048
