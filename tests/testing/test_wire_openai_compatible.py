"""OpenAI-compatible providers' SDKs reach the chat endpoint at the paths they use."""

from __future__ import annotations

from typing import Any

import cerebras.cloud.sdk as cerebras
import groq
import together
from mistralai.client import Mistral

from parley.testing import FakeLLMServer

USER: Any = [{"role": "user", "content": "hi"}]


def test_groq(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("from groq")
    cfg = fake_llm.config_list(api_type="groq")[0]
    with groq.Groq(api_key=cfg["api_key"], base_url=cfg["base_url"], max_retries=0) as c:
        r = c.chat.completions.create(model="llama", messages=USER)
    assert r.choices[0].message.content == "from groq"
    assert fake_llm.received[-1].path == "/openai/v1/chat/completions"


def test_mistral(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("from mistral")
    cfg = fake_llm.config_list(api_type="mistral")[0]
    with Mistral(api_key=cfg["api_key"], server_url=cfg["base_url"]) as c:
        r = c.chat.complete(model="mistral-small", messages=USER)
    assert r.choices[0].message.content == "from mistral"
    assert fake_llm.received[-1].path == "/v1/chat/completions"


def test_together(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("from together")
    cfg = fake_llm.config_list(api_type="together")[0]
    with together.Together(api_key=cfg["api_key"], base_url=cfg["base_url"], max_retries=0) as c:
        r = c.chat.completions.create(model="m", messages=USER)
    assert r.choices[0].message.content == "from together"  # type: ignore[union-attr]
    assert fake_llm.received[-1].path == "/v1/chat/completions"


def test_cerebras(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("from cerebras")
    cfg = fake_llm.config_list(api_type="cerebras")[0]
    with cerebras.Cerebras(
        api_key=cfg["api_key"], base_url=cfg["base_url"], max_retries=0, warm_tcp_connection=False
    ) as c:
        r: Any = c.chat.completions.create(model="llama3.1-8b", messages=USER)
    assert r.choices[0].message.content == "from cerebras"
    assert fake_llm.received[-1].path == "/v1/chat/completions"
