"""The chats the logging tests log: tools, code execution, a group chat, a nested chat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import parley
from parley import (
    AssistantAgent,
    ConversableAgent,
    GroupChat,
    GroupChatManager,
    UserProxyAgent,
)
from parley.coding import LocalCommandLineCodeExecutor
from parley.testing import FakeLLMServer

PRICE = [1.0, 2.0]  # USD per 1k tokens: every call costs something


def llm(fake: FakeLLMServer) -> dict[str, Any]:
    return fake.llm_config(price=PRICE, cache_seed=None)


def tool_chat(fake: FakeLLMServer) -> Any:
    assistant = AssistantAgent("assistant", llm_config=llm(fake))
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)

    def add(a: int, b: int) -> int:
        return a + b

    parley.register_function(add, caller=assistant, executor=user, description="Add.")
    fake.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 2, "b": 3}}])
    fake.add_reply("TERMINATE")
    return user.initiate_chat(assistant, message="2+3?", silent=True)


def code_chat(fake: FakeLLMServer, work_dir: Path) -> Any:
    coder = AssistantAgent("coder", llm_config=llm(fake))
    runner = UserProxyAgent(
        "runner",
        human_input_mode="NEVER",
        code_execution_config={"executor": LocalCommandLineCodeExecutor(work_dir=work_dir)},
    )
    fake.add_reply("```python\nprint(6 * 7)\n```")
    fake.add_reply("TERMINATE")
    return runner.initiate_chat(coder, message="six times seven?", silent=True)


def group_chat(fake: FakeLLMServer) -> Any:
    alice = ConversableAgent("alice", llm_config=llm(fake), human_input_mode="NEVER")
    bob = ConversableAgent("bob", llm_config=llm(fake), human_input_mode="NEVER")
    host = ConversableAgent("host", llm_config=False, human_input_mode="NEVER")
    group = GroupChat(
        [host, alice, bob], messages=[], max_round=3, speaker_selection_method="round_robin"
    )
    manager = GroupChatManager(group, llm_config=False)
    fake.add_reply("alice speaks")
    fake.add_reply("bob speaks")
    return host.initiate_chat(manager, message="let us talk", silent=True)


def nested_chat(fake: FakeLLMServer) -> Any:
    writer = ConversableAgent(
        "writer", llm_config=False, human_input_mode="NEVER", default_auto_reply="thanks"
    )
    critic = ConversableAgent("critic", llm_config=False, human_input_mode="NEVER")
    reviewer = ConversableAgent("reviewer", llm_config=llm(fake), human_input_mode="NEVER")
    critic.register_nested_chats(
        [{"recipient": reviewer, "max_turns": 1, "summary_method": "last_msg"}], trigger=writer
    )
    fake.add_reply("the review")
    return writer.initiate_chat(critic, message="a draft", max_turns=1, silent=True)
