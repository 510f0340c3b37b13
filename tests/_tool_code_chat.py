"""The two-agent chat that makes every kind of step: the assistant calls a tool (``add``),
then writes a code block the user runs locally, then ends the chat (``TERMINATE``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import parley
from parley import AssistantAgent, UserProxyAgent
from parley.testing import FakeLLMServer


def tool_and_code_agents(
    fake_llm: FakeLLMServer,
    tmp_path: Path,
    *,
    system_message: str | None = None,
    usages: Sequence[dict[str, Any] | None] = (None, None, None),
    **llm: Any,
) -> tuple[UserProxyAgent, AssistantAgent]:
    """(user, assistant), the model's three replies scripted; ``llm`` goes into the
    assistant's llm_config, ``usages`` into the replies."""
    options = {} if system_message is None else {"system_message": system_message}
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config(**llm), **options)
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={"work_dir": str(tmp_path), "use_docker": False},
    )

    def add(a: int, b: int) -> int:
        return a + b

    parley.register_function(add, caller=assistant, executor=user, description="Add.")
    replies: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
        {"content": "```python\nprint(2 + 3)\n```"},
        {"content": "TERMINATE"},
    ]
    for reply, usage in zip(replies, usages, strict=True):
        fake_llm.add_reply(**reply, **({} if usage is None else {"usage": usage}))
    return user, assistant
