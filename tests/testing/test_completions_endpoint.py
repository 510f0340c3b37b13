"""OpenAI's legacy text completions (``POST /v1/completions``) as the real openai client sees
them: texts, batches, echo, logprobs, usage, streaming, errors."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from parley.testing import FakeLLMServer

from ._raw import request

MODEL = "gpt-3.5-turbo-instruct"


def _texts(response: Any) -> list[tuple[int, str]]:
    return [(c.index, c.text) for c in response.choices]


def test_text_reply(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply(" Paris.")
    r = client.completions.create(model=MODEL, prompt="The capital of France is")
    assert r.object == "text_completion"
    assert r.id.startswith("cmpl-")
    assert r.model == MODEL
    assert isinstance(r.created, int)
    (choice,) = r.choices
    assert (choice.index, choice.text, choice.finish_reason, choice.logprobs) == (
        0,
        " Paris.",
        "stop",
        None,
    )
    assert r.usage is not None
    assert r.usage.prompt_tokens > 0
    assert r.usage.completion_tokens > 0
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens


async def test_text_reply_async(fake_llm: FakeLLMServer, aclient: openai.AsyncOpenAI) -> None:
    fake_llm.add_reply("first").add_reply("second")
    r1 = await aclient.completions.create(model=MODEL, prompt="a")
    r2 = await aclient.completions.create(model=MODEL, prompt="b")
    assert [r1.choices[0].text, r2.choices[0].text] == ["first", "second"]
    assert r1.id != r2.id


def test_usage_counts_as_the_chat_path_does(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply("x" * 40).add_reply("y", usage={"prompt_tokens": 9, "completion_tokens": 2})
    r = client.completions.create(model=MODEL, prompt="p" * 400)
    assert r.usage is not None
    # About four characters a token, as the chat path approximates.
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (100, 10)
    r = client.completions.create(model=MODEL, prompt="p")
    assert r.usage is not None
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.total_tokens) == (9, 2, 11)


def test_n_repeats_a_single_scripted_choice(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply("same")
    fake_llm.add_reply(choices=["a", {"content": "b", "finish_reason": "length"}])
    r = client.completions.create(model=MODEL, prompt="p", n=3)
    assert _texts(r) == [(0, "same"), (1, "same"), (2, "same")]
    r = client.completions.create(model=MODEL, prompt="p", n=2)
    assert [(c.text, c.finish_reason) for c in r.choices] == [("a", "stop"), ("b", "length")]


def test_a_list_of_prompts_gets_n_choices_each(
    fake_llm: FakeLLMServer, client: openai.OpenAI
) -> None:
    # OpenAI's batch order: choice i answers prompt i // n.
    fake_llm.add_reply(choices=["1a", "1b", "2a", "2b", "3a", "3b"])
    fake_llm.add_reply(choices=["x", "y"])
    r = client.completions.create(model=MODEL, prompt=["one", "two", "three"], n=2)
    assert _texts(r) == [(0, "1a"), (1, "1b"), (2, "2a"), (3, "2b"), (4, "3a"), (5, "3b")]
    # n scripted choices are repeated for every prompt.
    r = client.completions.create(model=MODEL, prompt=["one", "two"], n=2, echo=True)
    assert _texts(r) == [(0, "onex"), (1, "oney"), (2, "twox"), (3, "twoy")]


def test_token_prompts(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.responder = lambda body: "!"
    r = client.completions.create(model=MODEL, prompt=[9906, 1917], echo=True)
    assert _texts(r) == [(0, "Hello world!")]  # cl100k_base ids, decoded for echo
    assert r.usage is not None
    assert r.usage.prompt_tokens == 2
    r = client.completions.create(model=MODEL, prompt=[[9906], [1917]])
    assert _texts(r) == [(0, "!"), (1, "!")]
    assert fake_llm.requests[-1]["prompt"] == [[9906], [1917]]


def test_echo_puts_the_prompt_first(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply(" world")
    r = client.completions.create(model=MODEL, prompt="hello", echo=True)
    assert r.choices[0].text == "hello world"


def test_logprobs_shape(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply(" The quick brown fox").add_reply(" The quick brown fox")
    r = client.completions.create(model=MODEL, prompt="Once:", logprobs=3)
    lp = r.choices[0].logprobs
    assert lp is not None
    assert lp.tokens is not None
    assert lp.token_logprobs is not None
    assert lp.top_logprobs is not None
    assert lp.text_offset is not None
    assert lp.tokens == [" The", " quick", " brown", " fox"]  # cl100k_base's split
    assert "".join(lp.tokens) == r.choices[0].text
    assert len(lp.token_logprobs) == len(lp.top_logprobs) == len(lp.text_offset) == 4
    assert all(p < 0 for p in lp.token_logprobs)
    # Offsets count from the start of prompt + completion.
    assert lp.text_offset == [5, 9, 15, 21]
    for token, top in zip(lp.tokens, lp.top_logprobs, strict=True):
        assert len(top) == 3
        assert max(top, key=top.__getitem__) == token
    again = client.completions.create(model=MODEL, prompt="Once:", logprobs=3)
    assert again.choices[0].logprobs == lp  # deterministic


def test_logprobs_with_echo_cover_the_prompt(
    fake_llm: FakeLLMServer, client: openai.OpenAI
) -> None:
    fake_llm.add_reply(" naïve café")
    r = client.completions.create(model=MODEL, prompt="A", echo=True, logprobs=0)
    lp = r.choices[0].logprobs
    assert lp is not None
    assert lp.tokens is not None
    assert lp.top_logprobs is not None
    assert "".join(lp.tokens) == "A naïve café"
    assert lp.text_offset is not None
    assert lp.text_offset[0] == 0
    assert all(len(top) == 1 for top in lp.top_logprobs)  # the sampled token alone


def test_stop_and_max_tokens_are_accepted_and_recorded(
    fake_llm: FakeLLMServer, client: openai.OpenAI
) -> None:
    # As for chat, the fake does not cut texts itself: a test scripts finish_reason="length".
    fake_llm.add_reply("cut", finish_reason="length")
    r = client.completions.create(model=MODEL, prompt="p", stop=["\n", "END"], max_tokens=1)
    assert (r.choices[0].text, r.choices[0].finish_reason) == ("cut", "length")
    assert fake_llm.last_request["stop"] == ["\n", "END"]
    assert fake_llm.last_request["max_tokens"] == 1


def test_responder_receives_the_prompt(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    def responder(body: dict[str, Any]) -> str:
        if "prompt" in body:
            return f"completing {body['prompt']!r}"
        return "chatting"

    fake_llm.responder = responder
    r = client.completions.create(model=MODEL, prompt="abc")
    assert r.choices[0].text == "completing 'abc'"
    chat = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert chat.choices[0].message.content == "chatting"
    assert [rec.path for rec in fake_llm.received] == ["/v1/completions", "/v1/chat/completions"]
    assert fake_llm.requests[0]["prompt"] == "abc"


def test_a_tool_call_reply_is_a_clear_500(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 1}}])
    with pytest.raises(openai.InternalServerError, match="text completions have no tool calls"):
        client.completions.create(model=MODEL, prompt="p")
    (error,) = fake_llm.errors
    assert "text completions have no tool calls" in str(error)
    fake_llm.errors.clear()  # seen: the fixture would fail the test on it


def test_scripted_errors(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_error(429, "slow down", headers={"Retry-After": "1"})
    with pytest.raises(openai.RateLimitError) as info:
        client.completions.create(model=MODEL, prompt="p")
    assert info.value.status_code == 429
    assert info.value.response.headers["retry-after"] == "1"


def test_empty_script_names_text_completions(fake_llm: FakeLLMServer) -> None:
    resp = request(fake_llm, "POST", "/v1/completions", json.dumps({"model": "m", "prompt": "p"}))
    assert resp.status == 500
    assert (
        "no scripted answer left for text-completion request #1" in resp.json()["error"]["message"]
    )


@pytest.mark.parametrize(
    ("options", "fragment", "param"),
    [
        (
            {"prompt": "p", "n": 2, "best_of": 1},
            "best_of must be greater than or equal to n",
            "best_of",
        ),
        ({"prompt": "p", "best_of": 3, "stream": True}, "Cannot stream results", "best_of"),
        ({"prompt": "p", "logprobs": 6}, "Invalid 'logprobs'", "logprobs"),
        ({"prompt": "p", "n": 0}, "Invalid 'n'", "n"),
        ({"prompt": "p", "max_tokens": -1}, "Invalid 'max_tokens'", "max_tokens"),
        ({"prompt": "p", "temperature": 2.5}, "Invalid 'temperature'", "temperature"),
        ({"prompt": "p", "top_p": 1.5}, "Invalid 'top_p'", "top_p"),
        ({"prompt": "p", "presence_penalty": -3}, "Invalid 'presence_penalty'", "presence_penalty"),
        (
            {"prompt": "p", "frequency_penalty": 2.1},
            "Invalid 'frequency_penalty'",
            "frequency_penalty",
        ),
        ({"prompt": "p", "stop": ["a", "b", "c", "d", "e"]}, "at most 4 strings", "stop"),
        ({"prompt": "p", "stop": 3}, "Invalid 'stop'", "stop"),
        ({"prompt": "p", "echo": "yes"}, "Invalid type for 'echo'", "echo"),
        ({"prompt": []}, "empty array", "prompt"),
        ({"prompt": ["a", 1]}, "Invalid type for 'prompt'", "prompt"),
        ({"prompt": {"text": "a"}}, "Invalid type for 'prompt'", "prompt"),
        ({}, "Missing required parameter: 'prompt'", "prompt"),
    ],
)
def test_requests_openai_rejects(
    fake_llm: FakeLLMServer,
    client: openai.OpenAI,
    options: dict[str, Any],
    fragment: str,
    param: str,
) -> None:
    fake_llm.add_reply("unused")
    body = {"model": MODEL, **options}
    with pytest.raises(openai.BadRequestError) as info:
        client.post("/completions", body=body, cast_to=dict)
    assert fragment in info.value.message
    assert info.value.param == param
    assert fake_llm.pending == 1  # a rejected request consumes no scripted answer


def test_the_missing_model_is_openais_message(fake_llm: FakeLLMServer) -> None:
    resp = request(fake_llm, "POST", "/v1/completions", b'{"prompt": "p"}')
    assert resp.status == 400
    assert resp.json()["error"]["message"] == "you must provide a model parameter"


def test_accepted_edge_values(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.responder = lambda body: "ok"
    for options in (
        {"max_tokens": 0, "echo": True, "logprobs": 0},  # scoring a prompt
        {"best_of": 3, "n": 2},
        {"stop": "\n"},
        {"presence_penalty": -2, "frequency_penalty": 2},
    ):
        client.completions.create(model=MODEL, prompt="p", **options)
    client.completions.create(model=MODEL, prompt=None)  # null: the empty document


def test_lenient_server_checks_only_model_and_prompt() -> None:
    with (
        FakeLLMServer(strict=False, default="fine") as server,
        openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0) as c,
    ):
        r = c.post(
            "/completions",
            body={"model": "m", "prompt": {"odd": 1}, "logprobs": 9},
            cast_to=openai.types.Completion,
        )
        assert r.choices[0].text == "fine"
        with pytest.raises(openai.BadRequestError, match="'prompt'"):
            c.post("/completions", body={"model": "m"}, cast_to=openai.types.Completion)


def test_paths_without_v1_and_azure(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda body: "ok"
    with openai.OpenAI(base_url=fake_llm.url, api_key="k", max_retries=0) as c:
        assert c.completions.create(model="m", prompt="p").choices[0].text == "ok"
    with openai.AzureOpenAI(
        azure_endpoint=fake_llm.url, api_key="k", api_version="2024-02-01", max_retries=0
    ) as c:
        assert c.completions.create(model="instruct", prompt="p").choices[0].text == "ok"
    assert [r.path for r in fake_llm.received] == [
        "/completions",
        "/openai/deployments/instruct/completions",
    ]
    assert request(fake_llm, "GET", "/v1/completions").status == 405


def test_context_window_counts_the_longest_prompt() -> None:
    with (
        FakeLLMServer(default="ok", context_window=10) as server,
        openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0) as c,
    ):
        assert c.completions.create(model="gpt-4", prompt=["short", "also short"]).choices
        with pytest.raises(openai.BadRequestError) as info:
            c.completions.create(model="gpt-4", prompt=["short", "word " * 20])
    assert info.value.code == "context_length_exceeded"
    assert info.value.param == "prompt"


# -- streaming ----------------------------------------------------------------------------


def _collect(chunks: Any) -> dict[str, Any]:
    """Fold streamed text chunks back together, per choice, as a streaming consumer would."""
    texts: dict[int, str] = {}
    finish: dict[int, str | None] = {}
    tokens: dict[int, list[str]] = {}
    usage, count = None, 0
    for chunk in chunks:
        count += 1
        assert chunk.object == "text_completion"
        if chunk.usage is not None:
            usage = chunk.usage
        for c in chunk.choices:
            texts[c.index] = texts.get(c.index, "") + c.text
            if c.finish_reason is not None:
                finish[c.index] = c.finish_reason
            if c.logprobs is not None:
                tokens.setdefault(c.index, []).extend(c.logprobs.tokens or [])
    return {"texts": texts, "finish": finish, "tokens": tokens, "usage": usage, "chunks": count}


def test_stream_text(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    text = "The quick brown fox\njumps over  the lazy dog."
    fake_llm.add_reply(text)
    got = _collect(client.completions.create(model=MODEL, prompt="p", stream=True))
    assert got["texts"] == {0: text}
    assert got["finish"] == {0: "stop"}
    assert got["chunks"] > 5  # really streamed in pieces
    assert got["usage"] is None  # not asked for


async def test_stream_with_usage_n_and_logprobs_async(
    fake_llm: FakeLLMServer, aclient: openai.AsyncOpenAI
) -> None:
    fake_llm.add_reply(choices=["one two", "three"], usage={"prompt_tokens": 5})
    stream = await aclient.completions.create(
        model=MODEL,
        prompt="p",
        n=2,
        logprobs=1,
        stream=True,
        stream_options={"include_usage": True},
    )
    got = _collect([c async for c in stream])
    assert got["texts"] == {0: "one two", 1: "three"}
    assert got["finish"] == {0: "stop", 1: "stop"}
    assert got["tokens"] == {0: ["one", " two"], 1: ["three"]}  # a chunk per token
    assert got["usage"].prompt_tokens == 5
    assert got["usage"].total_tokens == 5 + got["usage"].completion_tokens


def test_stream_echo_and_pacing(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply(" a b c", chunk_delay=0.05, drop_after_chunks=2)
    fake_llm.add_reply(" rest")
    with pytest.raises(openai.APIConnectionError):
        _collect(client.completions.create(model=MODEL, prompt="p", stream=True))
    got = _collect(client.completions.create(model=MODEL, prompt="start", echo=True, stream=True))
    assert got["texts"] == {0: "start rest"}
