"""FakeLLMServer(context_window=N): a prompt over N tokens gets OpenAI's 400."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from parley.testing import FakeLLMServer
from parley.token_count_utils import count_token


def ask(server: FakeLLMServer, messages: list[dict[str, Any]], model: str = "fake-model") -> Any:
    with openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0) as client:
        return client.chat.completions.create(model=model, messages=messages)  # type: ignore[arg-type]


def test_a_prompt_within_the_window_is_answered() -> None:
    messages = [{"role": "user", "content": "hello world"}]
    tokens = count_token(messages, model="gpt-4-0613")
    with FakeLLMServer(default="ok", context_window=tokens) as server:
        assert ask(server, messages).choices[0].message.content == "ok"


@pytest.mark.parametrize("model", ["fake-model", "gpt-4o"])
def test_a_longer_prompt_gets_openais_error(model: str) -> None:
    messages = [{"role": "user", "content": "alpha beta gamma " * 20}]
    counted = "gpt-4-0613" if model == "fake-model" else model
    tokens = count_token(messages, model=counted)
    with FakeLLMServer(default="ok", context_window=10) as server:
        with pytest.raises(openai.BadRequestError) as raised:
            ask(server, messages, model)
        assert raised.value.status_code == 400
        body = json.loads(server.received[-1].raw)
        assert body["messages"] == messages
    assert raised.value.body == {
        "message": f"This model's maximum context length is 10 tokens. However, your messages "
        f"resulted in {tokens} tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }


def test_no_window_by_default() -> None:
    with FakeLLMServer(default="ok") as server:
        assert server.context_window is None
        assert (
            ask(server, [{"role": "user", "content": "x " * 50_000}]).choices[0].message.content
            == "ok"
        )
