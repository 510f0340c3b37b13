"""pytest plugin: the ``fake_llm`` fixture, a started :class:`~parley.testing.FakeLLMServer`.

Installed with parley and loaded automatically (entry point ``pytest11``); or name it in a
conftest: ``pytest_plugins = ["parley.testing.pytest_plugin"]``.

    def test_agent(fake_llm):
        fake_llm.add_reply("TERMINATE")
        assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
        ...

The fixture fails the test if the server's responder raised, so a broken responder is not
mistaken for a broken agent.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .fake_server import FakeLLMServer

__all__ = ["fake_llm"]


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """A FakeLLMServer on 127.0.0.1 and a free port, stopped after the test."""
    with FakeLLMServer() as server:
        yield server
        if server.errors:
            raise AssertionError(
                f"the fake LLM's responder raised {len(server.errors)} time(s); first: "
                f"{type(server.errors[0]).__name__}: {server.errors[0]}"
            ) from server.errors[0]
