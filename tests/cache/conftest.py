from __future__ import annotations

import openai
import pytest
from openai.types.chat import ChatCompletion

from parley.testing import FakeLLMServer


@pytest.fixture
def chat_completion(fake_llm: FakeLLMServer) -> ChatCompletion:
    """A real ChatCompletion, as the completion client stores in caches."""
    fake_llm.add_reply("the cached answer")
    with openai.OpenAI(base_url=fake_llm.base_url, api_key="sk-test", max_retries=0) as client:
        return client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "hi"}]
        )
