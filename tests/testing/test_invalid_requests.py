"""Requests a real server rejects get a 400 with an OpenAI-style error body."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from parley.testing import FakeLLMServer

from ._raw import post_chat, request


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"{not json", "could not parse the JSON body"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"messages": [{"role": "user", "content": "x"}]}', "you must provide a model parameter"),
        (b'{"model": "m"}', "Missing required parameter: 'messages'"),
        (b'{"model": "m", "messages": []}', "empty array"),
        (b'{"model": "m", "messages": "hi"}', "expected an array"),
    ],
)
def test_basic_checks(fake_llm: FakeLLMServer, body: bytes, fragment: str) -> None:
    fake_llm.add_reply("unused")
    resp = post_chat(fake_llm, body)
    assert resp.status == 400
    error = resp.json()["error"]
    assert fragment in error["message"]
    assert error["type"] == "invalid_request_error"
    assert fake_llm.pending == 1  # a rejected request consumes no scripted answer


def test_missing_messages_through_the_client(
    fake_llm: FakeLLMServer, client: openai.OpenAI
) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="m", messages=[])
    assert info.value.status_code == 400
    assert info.value.param == "messages"


STRICT_CASES: list[tuple[list[dict[str, Any]], str, str]] = [
    (
        [{"role": "user", "content": "hi", "name": "Product Manager"}],
        "'Product Manager' does not match '^[a-zA-Z0-9_-]{1,64}$'",
        "messages.[0].name",
    ),
    ([{"role": "user", "content": "hi", "name": "x" * 65}], "does not match", "messages.[0].name"),
    ([{"role": "robot", "content": "hi"}], "Invalid value: 'robot'", "messages.[0].role"),
    ([{"role": "user", "content": None}], "expected a string, got null", "messages.[0].content"),
    (
        [{"role": "user", "content": 42}],
        "expected one of a string or array",
        "messages.[0].content",
    ),
    (
        [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "call_1", "content": "3"},
        ],
        "must be a response to a preceeding message with 'tool_calls'",
        "messages.[1].role",
    ),
    (
        [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}"},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "g", "arguments": "{}"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
            {"role": "user", "content": "and?"},
        ],
        "did not have response messages: call_2",
        "messages.[1].role",
    ),
]


@pytest.mark.parametrize(("messages", "fragment", "param"), STRICT_CASES)
def test_strict_checks(
    client: openai.OpenAI, messages: list[dict[str, Any]], fragment: str, param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    assert fragment in info.value.message
    assert info.value.param == param


def test_bad_tool_name(client: openai.OpenAI) -> None:
    tools = [
        {"type": "function", "function": {"name": "my tool", "parameters": {"type": "object"}}}
    ]
    with pytest.raises(openai.BadRequestError, match="does not match pattern"):
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "x"}],
            tools=tools,  # type: ignore[arg-type]
        )


def test_bad_options(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="temperature"):
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], temperature=3
        )


def test_valid_tool_round_trip_is_accepted(fake_llm: FakeLLMServer, client: openai.OpenAI) -> None:
    fake_llm.add_reply("3")
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "add"}], "name": "user_proxy"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "3"},
        {"role": "function", "name": "legacy", "content": "x"},
    ]
    r = client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    assert r.choices[0].message.content == "3"


def test_lenient_server_accepts_what_openai_rejects() -> None:
    with (
        FakeLLMServer(strict=False, default="fine") as server,
        openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0) as c,
    ):
        r = c.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x", "name": "Product Manager"}]
        )
    assert r.choices[0].message.content == "fine"


def test_unknown_path_and_method(fake_llm: FakeLLMServer) -> None:
    missing = request(fake_llm, "POST", "/v1/embeddings", b"{}")
    wrong = request(fake_llm, "GET", "/v1/chat/completions")
    assert missing.status == 404
    assert "Unknown request URL" in missing.json()["error"]["message"]
    assert wrong.status == 405
