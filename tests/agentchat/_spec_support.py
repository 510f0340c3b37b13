"""Helpers shared by the ``test_spec_*`` conformance tests (AutoGen 0.2's behaviour).

``VARIANTS`` parametrizes a test over AutoGen's sync API and its ``a_`` twin. The sync variant
runs in a worker thread with no event loop, as it would in a plain script.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from parley import ChatResult, ConversableAgent

VARIANTS = pytest.mark.parametrize("variant", ["sync", "async"])


def agent(name: str, **kwargs: Any) -> ConversableAgent:
    """A ConversableAgent without an LLM, human or code execution unless asked for."""
    kwargs.setdefault("human_input_mode", "NEVER")
    kwargs.setdefault("code_execution_config", False)
    return ConversableAgent(name, **kwargs)


async def call(variant: str, obj: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """``obj.method(...)`` (in a thread without a loop) or ``await obj.a_method(...)``."""
    if variant == "async":
        return await getattr(obj, "a_" + method)(*args, **kwargs)
    return await asyncio.to_thread(getattr(obj, method), *args, **kwargs)


async def initiate(
    variant: str, sender: ConversableAgent, recipient: ConversableAgent, **kwargs: Any
) -> ChatResult:
    """``sender.initiate_chat(recipient, ...)`` or its async twin."""
    result: ChatResult = await call(variant, sender, "initiate_chat", recipient, **kwargs)
    return result


def contents(history: list[dict[str, Any]] | None) -> list[Any]:
    assert history is not None
    return [m.get("content") for m in history]


def speakers(history: list[dict[str, Any]] | None) -> list[tuple[str, str | None]]:
    assert history is not None
    return [(m["role"], m.get("name")) for m in history]
