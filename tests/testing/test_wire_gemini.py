"""Gemini's generateContent, through the google-genai SDK, answered from the same script."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from google import genai
from google.genai import errors, types

from parley.testing import FakeLLMServer

ADD = types.FunctionDeclaration(
    name="add", description="Add", parameters_json_schema={"type": "object"}
)


@pytest.fixture
def gemini(fake_llm: FakeLLMServer) -> Iterator[genai.Client]:
    cfg = fake_llm.config_list("gemini-2.0-flash", api_type="google")[0]
    with genai.Client(
        api_key=cfg["api_key"], http_options=types.HttpOptions(base_url=cfg["base_url"])
    ) as c:
        yield c


def test_text_reply_with_usage(fake_llm: FakeLLMServer, gemini: genai.Client) -> None:
    fake_llm.add_reply("Hello", usage={"prompt_tokens": 4, "completion_tokens": 1})
    r = gemini.models.generate_content(
        model="gemini-2.0-flash",
        contents="hi",
        config=types.GenerateContentConfig(system_instruction="Be brief.", max_output_tokens=9),
    )
    assert r.text == "Hello"
    assert r.usage_metadata is not None
    assert (r.usage_metadata.prompt_token_count, r.usage_metadata.candidates_token_count) == (4, 1)
    rec = fake_llm.received[-1]
    assert rec.protocol == "gemini"
    assert rec.headers["x-goog-api-key"] == "sk-parley-fake"
    assert rec.chat["model"] == "gemini-2.0-flash"
    assert rec.chat["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]
    assert rec.chat["max_tokens"] == 9


def test_tool_call_round_trip(fake_llm: FakeLLMServer, gemini: genai.Client) -> None:
    seen: list[dict[str, Any]] = []

    def responder(chat: dict[str, Any]) -> Any:
        seen.append(chat)
        if chat["messages"][-1]["role"] == "tool":
            return "done: " + chat["messages"][-1]["content"]
        return {"tool_calls": [{"name": "add", "arguments": {"a": 1}}]}

    fake_llm.responder = responder
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[ADD])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    user = types.Content(role="user", parts=[types.Part(text="add")])
    first = gemini.models.generate_content(model="g", contents=[user], config=config)
    (call,) = first.function_calls or []
    assert (call.name, call.args) == ("add", {"a": 1})
    assert first.candidates is not None
    answer = types.Part.from_function_response(name="add", response={"result": 3})
    history = [user, first.candidates[0].content, types.Content(role="user", parts=[answer])]
    second = gemini.models.generate_content(model="g", contents=history, config=config)  # type: ignore[arg-type]
    assert second.text == 'done: {"result": 3}'
    assert seen[0]["tools"][0]["function"]["name"] == "add"
    assert seen[1]["messages"][1]["tool_calls"][0]["function"]["name"] == "add"


def test_streaming(fake_llm: FakeLLMServer, gemini: genai.Client) -> None:
    fake_llm.add_reply("one two three")
    chunks = list(gemini.models.generate_content_stream(model="g", contents="hi"))
    assert [c.text for c in chunks] == ["one ", "two ", "three"]
    assert chunks[-1].usage_metadata is not None
    assert "alt=sse" in fake_llm.received[-1].query


def test_rate_limit_with_retry_after(fake_llm: FakeLLMServer, gemini: genai.Client) -> None:
    fake_llm.add_error(429, "Quota exceeded", headers={"Retry-After": "3"})
    with pytest.raises(errors.ClientError) as info:
        gemini.models.generate_content(model="g", contents="hi")
    assert (info.value.code, info.value.status) == (429, "RESOURCE_EXHAUSTED")
    assert info.value.message == "Quota exceeded"
    assert info.value.response.headers["retry-after"] == "3"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("contents", "words"),
    [
        ([{"role": "assistant", "parts": [{"text": "x"}]}], "valid role: user, model"),
        (
            [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}],
            "function response turn comes immediately after a function call turn",
        ),
    ],
)
def test_strict_rejections(gemini: genai.Client, contents: list[Any], words: str) -> None:
    with pytest.raises(errors.ClientError) as info:
        gemini.models.generate_content(model="g", contents=contents)
    assert info.value.code == 400
    assert words in (info.value.message or "")


def test_key_in_query_string() -> None:
    with FakeLLMServer(api_key="g-key", default="ok") as server:
        body = b'{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}'
        url = f"{server.url}/v1beta/models/g:generateContent?key=g-key"
        req = urllib.request.Request(url, body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as r:
            assert json.loads(r.read())["candidates"][0]["content"]["parts"] == [{"text": "ok"}]


def test_vertex_ai_paths_with_a_bearer_token() -> None:
    from google.oauth2.credentials import Credentials

    with FakeLLMServer(api_key="access-token", default="from vertex") as server:
        with genai.Client(
            vertexai=True,
            project="proj",
            location="asia-east1",
            credentials=Credentials(token="access-token"),
            http_options=types.HttpOptions(base_url=server.url),
        ) as client:
            reply = client.models.generate_content(model="gemini-2.0-flash", contents="hi")
            assert reply.text == "from vertex"
        first = server.received[0]
        assert first.path.startswith("/v1beta1/projects/proj/locations/asia-east1/publishers/")
        assert first.protocol == "gemini"
