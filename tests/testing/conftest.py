from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import openai
import pytest

from parley.testing import FakeLLMServer


@pytest.fixture
def client(fake_llm: FakeLLMServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=fake_llm.base_url, api_key="sk-test", max_retries=0) as c:
        yield c


@pytest.fixture
async def aclient(fake_llm: FakeLLMServer) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(
        base_url=fake_llm.base_url, api_key="sk-test", max_retries=0
    ) as c:
        yield c
