"""The agents of the scenarios, on the fake model server: an assistant whose tool needs the
human's approval, run by the user proxy that stands for the AG-UI client's human."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from parley import AssistantAgent, UserProxyAgent
from parley.testing import FakeLLMServer

from .._approval_tools import add_send_email

WAIT = 20.0  # seconds: the bound of every wait (each takes milliseconds)


def wait_until(condition: Callable[[], Any], timeout: float = WAIT) -> Any:
    """Poll ``condition`` until it is true (bounded); its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout} s: {condition}")
        time.sleep(0.02)


def agents(
    fake_llm: FakeLLMServer, ran: list[str], *, human_input_mode: str = "NEVER", **llm: Any
) -> tuple[AssistantAgent, UserProxyAgent]:
    """``(assistant, user)``: ``send_email`` needs approval; each call that runs is in ``ran``."""
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config(**llm))
    user = UserProxyAgent(
        "user",
        human_input_mode=human_input_mode,
        code_execution_config=False,
        is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
    )
    add_send_email(assistant, user, ran)
    return assistant, user


def email_call(to: str = "boss@example.com", call_id: str = "call-1") -> dict[str, Any]:
    return {"id": call_id, "name": "send_email", "arguments": {"to": to, "body": "Hello"}}
