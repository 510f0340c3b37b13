"""A two-agent chat with a tool call on OpenAI's Responses API with a reasoning model
(o4-mini), each answer with cached input and reasoning tokens: what the logging and tracing
tests record."""

from __future__ import annotations

from typing import Any

import parley
from parley import AssistantAgent, UserProxyAgent
from parley.testing import FakeLLMServer

MODEL = "o4-mini"
USAGE = {
    "prompt_tokens": 1000,
    "completion_tokens": 50,
    "prompt_tokens_details": {"cached_tokens": 400},
    "completion_tokens_details": {"reasoning_tokens": 30},
}
# o4-mini: $1.10 per 1M input tokens, $0.275 per 1M cached input tokens, $4.40 per 1M output
COST = (600 * 1.10 + 400 * 0.275 + 50 * 4.40) / 1e6


def tool_chat(fake: FakeLLMServer) -> Any:
    """user asks; the assistant calls add, then ends the chat: two calls, each USAGE."""
    config_list = fake.config_list(model=MODEL, api_type="responses")
    assistant = AssistantAgent("assistant", llm_config={"config_list": config_list})
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)

    def add(a: int, b: int) -> int:
        return a + b

    parley.register_function(add, caller=assistant, executor=user, description="Add.")
    fake.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 2, "b": 3}}], usage=USAGE)
    fake.add_reply("TERMINATE", usage=USAGE)
    return user.initiate_chat(assistant, message="2+3?", silent=True)
