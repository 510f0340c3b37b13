"""Replies as the real openai client sees them, sync and async."""

from __future__ import annotations

import json

import openai
import pytest

from parley.testing import FakeLLMServer

USER = [{"role": "user", "content": "hi"}]


def test_text_reply(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply("hello there")
    r = client.chat.completions.create(model="gpt-4o", messages=USER)
    assert r.choices[0].message.content == "hello there"
    assert r.choices[0].message.role == "assistant"
    assert r.choices[0].finish_reason == "stop"
    assert r.model == "gpt-4o"
    assert r.id.startswith("chatcmpl-")
    assert r.usage is not None
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens > 0


async def test_text_reply_async(fake_llm: FakeLLMServer, aclient: openai.AsyncOpenAI) -> None:
    fake_llm.add_reply("first").add_reply("second")
    r1 = await aclient.chat.completions.create(model="m", messages=USER)
    r2 = await aclient.chat.completions.create(model="m", messages=USER)
    assert [r1.choices[0].message.content, r2.choices[0].message.content] == ["first", "second"]
    assert r1.id != r2.id


def test_tool_calls_get_ids_and_json_arguments(
    fake_llm: FakeLLMServer, client: openai.OpenAI
) -> None:
    fake_llm.add_reply(
        tool_calls=[
            {"name": "add", "arguments": {"a": 1, "b": 2}},
            {"name": "echo", "arguments": '{"text": "unterminated'},  # sent as is
            {
                "id": "call_mine",
                "type": "function",
                "function": {"name": "noop", "arguments": "{}"},
            },
        ]
    )
    r = client.chat.completions.create(model="m", messages=USER)
    msg = r.choices[0].message
    assert r.choices[0].finish_reason == "tool_calls"
    assert msg.content is None
    assert msg.tool_calls is not None
    calls = [(tc.id, tc.function.name, tc.function.arguments) for tc in msg.tool_calls]
    assert json.loads(calls[0][2]) == {"a": 1, "b": 2}
    assert calls[1][2] == '{"text": "unterminated'
    assert calls[2][0] == "call_mine"
    ids = [c[0] for c in calls]
    assert len(set(ids)) == 3
    assert all(i.startswith("call_") for i in ids)


def test_tool_call_ids_are_unique_across_replies(
    fake_llm: FakeLLMServer, client: openai.OpenAI
) -> None:
    for _ in range(3):
        fake_llm.add_reply(tool_calls=[{"name": "f", "arguments": {}}])
    ids = set()
    for _ in range(3):
        r = client.chat.completions.create(model="m", messages=USER)
        ids.add(r.choices[0].message.tool_calls[0].id)  # type: ignore[index]
    assert len(ids) == 3


def test_legacy_function_call(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply(function_call={"name": "python", "arguments": {"cell": "1+1"}})
    r = client.chat.completions.create(model="m", messages=USER)
    fc = r.choices[0].message.function_call
    assert fc is not None
    assert fc.name == "python"
    assert json.loads(fc.arguments) == {"cell": "1+1"}
    assert r.choices[0].finish_reason == "function_call"


def test_custom_usage_finish_reason_and_model(
    fake_llm: FakeLLMServer, client: openai.OpenAI
) -> None:
    fake_llm.add_reply(
        "cut",
        finish_reason="length",
        usage={"prompt_tokens": 100, "completion_tokens": 7},
        model="gpt-4-0613",
    )
    r = client.chat.completions.create(model="gpt-4", messages=USER)
    assert r.choices[0].finish_reason == "length"
    assert r.model == "gpt-4-0613"
    assert r.usage is not None
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.total_tokens) == (100, 7, 107)


def test_several_choices_and_n(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply(choices=["a", {"content": "b", "finish_reason": "length"}])
    fake_llm.add_reply("same")
    r = client.chat.completions.create(model="m", messages=USER)
    assert [(c.index, c.message.content, c.finish_reason) for c in r.choices] == [
        (0, "a", "stop"),
        (1, "b", "length"),
    ]
    r = client.chat.completions.create(model="m", messages=USER, n=3)
    assert [c.message.content for c in r.choices] == ["same"] * 3


def test_usage_grows_with_the_prompt(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply("x").add_reply("x")
    short = client.chat.completions.create(model="m", messages=USER)
    long = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "word " * 400}]
    )
    assert short.usage is not None
    assert long.usage is not None
    assert long.usage.prompt_tokens > short.usage.prompt_tokens + 400


def test_responder_answers_dynamically(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.responder = lambda req: "echo: " + req["messages"][-1]["content"]
    r = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "ping"}])
    assert r.choices[0].message.content == "echo: ping"


def test_queue_comes_before_responder(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.responder = lambda req: {
        "tool_calls": [{"name": "t", "arguments": {"n": len(req["messages"])}}]
    }
    fake_llm.add_reply("queued")
    assert (
        client.chat.completions.create(model="m", messages=USER).choices[0].message.content
        == "queued"
    )
    r = client.chat.completions.create(model="m", messages=USER)
    assert r.choices[0].message.tool_calls[0].function.arguments == '{"n": 1}'  # type: ignore[index]


async def test_async_responder(fake_llm: FakeLLMServer, aclient: openai.AsyncOpenAI) -> None:
    async def respond(req: dict[str, object]) -> str:
        return f"model was {req['model']}"

    fake_llm.responder = respond
    r = await aclient.chat.completions.create(model="gpt-x", messages=USER)
    assert r.choices[0].message.content == "model was gpt-x"


def test_responder_none_falls_through_to_default(client: openai.OpenAI) -> None:
    with FakeLLMServer(default="fallback", responder=lambda req: None) as server:
        c = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        r = c.chat.completions.create(model="m", messages=USER)
        c.close()
    assert r.choices[0].message.content == "fallback"


def test_default_reply_repeats() -> None:
    with (
        FakeLLMServer(default={"content": "again"}) as server,
        openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0) as c,
    ):
        answers = [
            c.chat.completions.create(model="m", messages=USER).choices[0].message.content
            for _ in range(3)
        ]
    assert answers == ["again"] * 3


def test_models_endpoint(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    assert [m.id for m in client.models.list()] == ["fake-model"]
    assert client.models.retrieve("fake-model").id == "fake-model"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("nope")


def test_paths_without_v1(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("root")
    with openai.OpenAI(base_url=fake_llm.url, api_key="k", max_retries=0) as c:
        assert (
            c.chat.completions.create(model="m", messages=USER).choices[0].message.content == "root"
        )
        assert [m.id for m in c.models.list()] == ["fake-model"]


def test_config_list_and_llm_config(fake_llm: FakeLLMServer) -> None:
    cl = fake_llm.config_list(model="gpt-4o", temperature=0)
    assert cl == [
        {
            "model": "gpt-4o",
            "base_url": fake_llm.base_url,
            "api_key": "sk-parley-fake",
            "temperature": 0,
        }
    ]
    assert fake_llm.base_url == f"http://127.0.0.1:{fake_llm.port}/v1"
    cl[0]["model"] = "changed"  # a fresh list every time
    assert fake_llm.config_list()[0]["model"] == "fake-model"
    assert fake_llm.llm_config(cache_seed=None) == {
        "config_list": fake_llm.config_list(),
        "cache_seed": None,
    }


def test_azure_deployment_paths_and_api_key_header() -> None:
    with FakeLLMServer(api_key="azure-key") as server:
        server.add_reply("from azure")
        with openai.AzureOpenAI(
            azure_endpoint=server.url, api_key="azure-key", api_version="2024-02-01", max_retries=0
        ) as c:
            r = c.chat.completions.create(model="gpt-4o", messages=USER)
        assert r.choices[0].message.content == "from azure"
        rec = server.received[-1]
        assert rec.path == "/openai/deployments/gpt-4o/chat/completions"
        assert rec.query == "api-version=2024-02-01"
        assert rec.headers["api-key"] == "azure-key"


def test_requests_are_timestamped_in_arrival_order(
    fake_llm: FakeLLMServer, client: openai.OpenAI
) -> None:
    fake_llm.responder = lambda req: "x"
    for _ in range(3):
        client.chat.completions.create(model="m", messages=USER)
    times = [r.time for r in fake_llm.received]
    assert times == sorted(times)
    assert len(set(times)) == 3


def test_stop_sequences_cut_the_text_where_a_model_would_stop(
    fake_llm: FakeLLMServer, client: openai.OpenAI
) -> None:
    script = "Thought: look it up\nAction: search\nAction Input: x\nObservation: made up\nmore"
    fake_llm.add_reply(script).add_reply(script).add_reply(script)
    cut = client.chat.completions.create(
        model="m", messages=USER, stop=["\nObservation:", "Action Input"]
    )
    assert cut.choices[0].message.content == "Thought: look it up\nAction: search\n"
    assert cut.choices[0].finish_reason == "stop"
    single = client.chat.completions.create(model="m", messages=USER, stop="\nObservation:")
    assert single.choices[0].message.content == (
        "Thought: look it up\nAction: search\nAction Input: x"
    )
    text = client.completions.create(model="m", prompt="go", stop=["Action:"])
    assert text.choices[0].text == "Thought: look it up\n"


def test_streamed_replies_stop_at_the_stop_sequence_too(
    fake_llm: FakeLLMServer, client: openai.OpenAI
) -> None:
    fake_llm.add_reply("Final Answer: 4\nObservation: extra")
    stream = client.chat.completions.create(
        model="m", messages=USER, stop=["\nObservation:"], stream=True
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text == "Final Answer: 4"
