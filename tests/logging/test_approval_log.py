"""A call (or code) the human rejected is logged as an event of the agent, not as a function
call (or a code execution): it never ran."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import parley
from parley import AssistantAgent, UserProxyAgent, runtime_logging
from parley.coding import LocalCommandLineCodeExecutor
from parley.testing import FakeLLMServer

from .conftest import rows


def test_a_rejected_call_is_an_event_not_a_function_call(dbname: str) -> None:
    with FakeLLMServer() as fake:
        runtime_logging.start(config={"dbname": dbname})
        assistant = AssistantAgent("assistant", llm_config=fake.llm_config(cache_seed=None))
        user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)

        def charge(amount: int) -> str:
            return "charged"

        parley.register_function(
            charge, caller=assistant, executor=user, description="Charge.", requires_approval=True
        )
        answers = iter(["", "too much"])
        user.register_human_review(lambda request: next(answers))
        fake.add_reply(
            tool_calls=[
                {"name": "charge", "arguments": {"amount": 5}, "id": "call_1"},
                {"name": "charge", "arguments": {"amount": 500}, "id": "call_2"},
            ]
        )
        fake.add_reply("TERMINATE")
        result = user.initiate_chat(assistant, message="Charge.", silent=True)
        runtime_logging.stop()

    con = sqlite3.connect(dbname)
    calls = rows(con, "function_calls")
    assert [json.loads(c["args"]) for c in calls] == [{"amount": 5}]
    (event,) = rows(con, "events", "WHERE event_name = 'tool_call_rejected'")
    assert event["source_name"] == "user"
    assert event["chat_id"] == result.run_id
    state = json.loads(event["json_state"])
    assert state["tool"] == "charge"
    assert state["call_id"] == "call_2"
    assert state["arguments"] == {"amount": 500}
    assert state["result"] == "Error: the human rejected the call of charge: too much"


def test_rejected_code_is_an_event_not_a_code_execution(dbname: str, tmp_path: Path) -> None:
    with FakeLLMServer() as fake:
        runtime_logging.start(config={"dbname": dbname})
        assistant = AssistantAgent("assistant", llm_config=fake.llm_config(cache_seed=None))
        (tmp_path / "work").mkdir()
        executor = LocalCommandLineCodeExecutor(work_dir=tmp_path / "work")
        user = UserProxyAgent(
            "user",
            human_input_mode="NEVER",
            code_execution_config={"executor": executor, "requires_approval": True},
        )
        answers = iter(["not that", ""])
        user.register_human_review(lambda request: next(answers))
        fake.add_reply("```python\nprint('first')\n```")
        fake.add_reply("```python\nprint('second')\n```")
        fake.add_reply("TERMINATE")
        user.initiate_chat(assistant, message="Code.", silent=True, max_turns=3)
        runtime_logging.stop()

    con = sqlite3.connect(dbname)
    (ran,) = rows(con, "code_executions")
    assert "second" in ran["code"]
    (event,) = rows(con, "events", "WHERE event_name = 'code_execution_rejected'")
    assert event["source_name"] == "user"
    state = json.loads(event["json_state"])
    assert state["code"] == "print('first')"
    assert state["languages"] == ["python"]
    assert state["result"] == "Error: the human rejected the code: not that"
