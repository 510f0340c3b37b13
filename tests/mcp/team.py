"""Agents and chats served by the MCP server tests (``parley mcp serve tests/mcp/team.py:NAME``).

The model is the test's FakeLLMServer, whose OpenAI base URL comes in ``PARLEY_TEST_LLM_URL``.
"""

from __future__ import annotations

import os
from typing import Annotated

from parley import (
    AssistantAgent,
    ConversableAgent,
    GroupChat,
    GroupChatManager,
    UserProxyAgent,
    register_function,
)

LLM_CONFIG = {
    "config_list": [
        {
            "model": "fake-model",
            "base_url": os.environ.get("PARLEY_TEST_LLM_URL", "http://127.0.0.1:9/v1"),
            "api_key": "sk-parley-fake",
        }
    ],
    "cache_seed": None,
}

calculator = ConversableAgent("calculator", llm_config=LLM_CONFIG, human_input_mode="NEVER")


def add(a: Annotated[int, "the first number"], b: Annotated[int, "the second number"]) -> int:
    return a + b


def divide(a: float, b: float) -> float:
    return a / b


register_function(add, caller=calculator, executor=calculator, description="Add two integers.")
register_function(divide, caller=calculator, executor=calculator, description="Divide a by b.")


painter = ConversableAgent("painter", llm_config=False, human_input_mode="NEVER")

# A 1x1 PNG.
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
    "rkJggg=="
)


@painter.register_for_execution()
def paint(colour: str) -> list[dict[str, object]]:
    """Paint a pixel."""
    return [
        {"type": "text", "text": f"a {colour} pixel:"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}},
    ]


def team() -> GroupChatManager:
    """Write a short text on a task, reviewed once; returns the reviewed text."""
    user = UserProxyAgent(
        "user", human_input_mode="NEVER", code_execution_config=False, default_auto_reply=""
    )
    writer = AssistantAgent("writer", llm_config=LLM_CONFIG)
    critic = AssistantAgent("critic", llm_config=LLM_CONFIG)
    group = GroupChat(
        [user, writer, critic], messages=[], max_round=3, speaker_selection_method="round_robin"
    )
    return GroupChatManager(group, llm_config=False)


def pair() -> tuple[ConversableAgent, ConversableAgent, dict[str, object]]:
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    writer = AssistantAgent("writer", llm_config=LLM_CONFIG)
    return user, writer, {"max_turns": 1}


not_servable = 42


def _steps() -> tuple[ConversableAgent, list[dict[str, object]]]:
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    drafter = AssistantAgent("drafter", llm_config=LLM_CONFIG)
    editor = AssistantAgent("editor", llm_config=LLM_CONFIG)
    return user, [
        {"recipient": drafter, "max_turns": 1, "summary_method": "last_msg"},
        {
            "recipient": editor,
            "message": "Edit the draft.",
            "max_turns": 1,
            "summary_method": "last_msg",
        },
    ]


# Sequential chats, given directly (the same agents serve every call, one call at a time).
steps = _steps()
