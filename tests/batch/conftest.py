"""Fixtures of the batch tests: the fake model the chats talk to (``chats.respond``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from parley.testing import FakeLLMServer

from .chats import PRICE, respond


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(responder=respond) as fake:
        yield fake
        assert not fake.errors, fake.errors


@pytest.fixture
def config(server: FakeLLMServer) -> dict[str, Any]:
    """The chats' ``llm_config``, priced so that costs add up to something."""
    return server.llm_config(price=PRICE)
