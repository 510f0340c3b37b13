"""The span of a call of a tool (or of code) that requires approval says what the human
decided; a rejected call is a failed span, never one of a tool that ran."""

from __future__ import annotations

from pathlib import Path

import parley
from parley import AssistantAgent, UserProxyAgent
from parley.coding import LocalCommandLineCodeExecutor
from parley.testing import FakeLLMServer

from .conftest import Traced


def test_the_spans_say_approved_or_rejected(fake_llm: FakeLLMServer, traced: Traced) -> None:
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    ran: list[int] = []

    def charge(amount: int) -> str:
        ran.append(amount)
        return "charged"

    def add(a: int, b: int) -> int:
        return a + b

    parley.register_function(
        charge, caller=assistant, executor=user, description="Charge.", requires_approval=True
    )
    parley.register_function(add, caller=assistant, executor=user, description="Add.")
    user.register_human_review(
        lambda r: "" if r.tool_call and r.tool_call.arguments["amount"] < 10 else "too much"
    )
    fake_llm.add_reply(
        tool_calls=[
            {"name": "charge", "arguments": {"amount": 5}},
            {"name": "charge", "arguments": {"amount": 500}},
            {"name": "add", "arguments": {"a": 1, "b": 2}},
        ]
    )
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="Charge.", silent=True)

    assert ran == [5]
    approved, rejected = traced.named("execute_tool charge")
    assert approved.attributes["parley.tool.approval"] == "approved"
    assert approved.attributes["parley.tool.success"] is True
    assert approved.status.status_code.name == "UNSET"
    assert rejected.attributes["parley.tool.approval"] == "rejected"
    assert rejected.attributes["parley.tool.success"] is False
    assert rejected.status.status_code.name == "ERROR"
    assert "parley.tool.approval" not in traced.one("execute_tool add").attributes


def test_code_spans_say_approved_or_rejected(
    fake_llm: FakeLLMServer, traced: Traced, tmp_path: Path
) -> None:
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path)
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={"executor": executor, "requires_approval": True},
    )
    answers = iter(["no", ""])
    user.register_human_review(lambda request: next(answers))
    fake_llm.add_reply("```python\nprint('first')\n```")
    fake_llm.add_reply("```python\nprint('second')\n```")
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="Code.", silent=True, max_turns=3)

    rejected, approved = traced.named("execute_code")
    assert rejected.attributes["parley.code.approval"] == "rejected"
    assert rejected.status.status_code.name == "ERROR"
    assert approved.attributes["parley.code.approval"] == "approved"
    assert approved.status.status_code.name == "UNSET"
