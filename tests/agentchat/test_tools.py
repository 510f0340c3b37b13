"""Tools end to end on the fake LLM: registration, execution, recovery from a model's mistakes."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel

import parley
from parley import AssistantAgent, ConversableAgent, UserProxyAgent
from parley.testing import FakeLLMServer
from tests._overlap import OVERLAP_TIMEOUT


class Point(BaseModel):
    x: int
    y: float = 0.0


def make_pair(fake_llm: FakeLLMServer, **llm: Any) -> tuple[AssistantAgent, UserProxyAgent]:
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config(**llm))
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    return assistant, user


def tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_register_function_end_to_end(fake_llm: FakeLLMServer) -> None:
    assistant, user = make_pair(fake_llm)

    def add(a: Annotated[int, "first"], b: Annotated[int, "second"] = 1) -> int:
        return a + b

    parley.register_function(add, caller=assistant, executor=user, description="Add two numbers.")
    fake_llm.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 2, "b": 3}}])
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="2+3?", silent=True)
    first, second = fake_llm.requests
    assert first["tools"] == [
        {
            "type": "function",
            "function": {
                "description": "Add two numbers.",
                "name": "add",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer", "description": "first"},
                        "b": {"type": "integer", "default": 1, "description": "second"},
                    },
                    "required": ["a"],
                },
            },
        }
    ]
    assert tool_results(second) == ["5"]
    assert (
        user.function_map["add"](a="1") == "2"
    )  # converted to the annotated type, then serialised


def test_decorators_pydantic_arguments_and_serialisation(fake_llm: FakeLLMServer) -> None:
    assistant, user = make_pair(fake_llm)

    @user.register_for_execution()
    @assistant.register_for_llm(description="Move a point.")
    def move(p: Point, dx: int, unit: Literal["m", "km"] = "m") -> dict[str, Any]:
        return {"x": p.x + dx, "y": p.y, "unit": unit}

    fake_llm.add_reply(
        tool_calls=[{"name": "move", "arguments": {"p": {"x": 1}, "dx": 2, "unit": "km"}}]
    )
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="move", silent=True)
    assert json.loads(tool_results(fake_llm.requests[1])[0]) == {"x": 3, "y": 0.0, "unit": "km"}
    assert move(Point(x=0), 1) == {
        "x": 1,
        "y": 0.0,
        "unit": "m",
    }  # the function itself is unchanged


def test_recovery_paths_reach_the_model(fake_llm: FakeLLMServer) -> None:
    assistant, user = make_pair(fake_llm)

    def divide(a: int, b: int) -> float:
        return a / b

    parley.register_function(divide, caller=assistant, executor=user, description="Divide.")
    fake_llm.add_reply(
        tool_calls=[
            {"name": "divide", "arguments": {"a": 1, "b": 0}},
            {"name": "divide", "arguments": '{"a": 1, "b": '},
            {"name": "divide", "arguments": {"a": "one"}},
            {"name": "multiply", "arguments": {"a": 1}},
            {"name": "divide", "arguments": {"a": 6, "b": 3}},
        ]
    )
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="go", silent=True)
    results = tool_results(fake_llm.requests[1])
    assert results[0] == "Error: division by zero"  # AutoGen's text
    assert results[1].startswith("Error: ")
    assert "The argument must be in JSON format." in results[1]
    assert "Invalid arguments for divide" in results[2]
    assert "a:" in results[2]
    assert "b:" in results[2]
    assert results[3] == "Error: Function multiply not found."
    assert results[4] == "2.0"


def test_legacy_function_call_style(fake_llm: FakeLLMServer) -> None:
    assistant, user = make_pair(fake_llm)

    @user.register_for_execution(name="shout")
    @assistant.register_for_llm(name="shout", description="Upper-case text.", api_style="function")
    def loud(text: str) -> str:
        return text.upper()

    fake_llm.add_reply(function_call={"name": "shout", "arguments": {"text": "hi"}})
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="go", silent=True)
    assert fake_llm.requests[0]["functions"][0]["name"] == "shout"
    function_message = fake_llm.requests[1]["messages"][-1]
    assert function_message == {"role": "function", "name": "shout", "content": "HI"}


def test_agents_from_one_llm_config_stay_independent(fake_llm: FakeLLMServer) -> None:
    llm_config = fake_llm.llm_config()
    a = ConversableAgent("a", llm_config=llm_config)
    b = ConversableAgent("b", llm_config=llm_config)

    @a.register_for_llm(description="Only for a.")
    def only_a(x: int) -> int:
        return x

    assert [t["function"]["name"] for t in a.llm_config["tools"]] == ["only_a"]  # type: ignore[index]
    assert "tools" not in b.llm_config  # type: ignore[operator]
    assert "tools" not in llm_config


def test_signature_updates_and_errors(fake_llm: FakeLLMServer) -> None:
    a = ConversableAgent("a", llm_config=fake_llm.llm_config())

    def f(x: int) -> int:
        return x

    with pytest.raises(ValueError, match="description is required"):
        a.register_for_llm()(f)
    a.register_for_llm(description="first")(f)
    with pytest.warns(UserWarning, match="Function 'f' is being overridden."):
        a.register_for_llm(description="second")(f)  # replaces, with AutoGen's warning
    assert [t["function"]["description"] for t in a.llm_config["tools"]] == ["second"]  # type: ignore[index]
    a.update_tool_signature("f", is_remove=True)
    assert "tools" not in a.llm_config  # type: ignore[operator]
    with pytest.raises(AssertionError):
        a.update_tool_signature("f", is_remove=True)
    no_llm = ConversableAgent("n")
    with pytest.raises(AssertionError, match="llm_config"):
        no_llm.register_for_llm(description="d")(f)

    def g(y):  # type: ignore[no-untyped-def]
        return y

    with pytest.raises(TypeError, match=r"g.*'y'"):
        a.register_for_llm(description="d")(g)


def test_a_signature_update_reaches_the_next_request(fake_llm: FakeLLMServer) -> None:
    """update_tool_signature / update_function_signature change agent.llm_config in place, as
    AutoGen's do, and the next request describes the tools as they are then."""
    fake_llm.add_reply("one").add_reply("two").add_reply("three")
    a = ConversableAgent("a", llm_config=fake_llm.llm_config(), human_input_mode="NEVER")
    schema = {
        "type": "function",
        "function": {"name": "add", "description": "Add.", "parameters": {"type": "object"}},
    }
    a.update_tool_signature(schema, is_remove=False)
    assert a.llm_config["tools"] == [schema]  # type: ignore[index]
    a.generate_reply([{"role": "user", "content": "hi"}])
    assert [t["function"]["name"] for t in fake_llm.last_request["tools"]] == ["add"]
    a.update_tool_signature("add", is_remove=True)
    a.update_function_signature({"name": "mul", "parameters": {}}, is_remove=False)
    a.generate_reply([{"role": "user", "content": "hi"}])
    assert "tools" not in fake_llm.last_request
    assert [f["name"] for f in fake_llm.last_request["functions"]] == ["mul"]
    a.update_function_signature("mul", is_remove=True)
    a.generate_reply([{"role": "user", "content": "hi"}])
    assert "functions" not in fake_llm.last_request
    assert schema["function"]["name"] == "add"  # the caller's schema is stored, not changed


def test_malformed_signatures_are_refused(fake_llm: FakeLLMServer) -> None:
    a = ConversableAgent("a", llm_config=fake_llm.llm_config())
    with pytest.raises(ValueError, match="must be of the type dict"):
        a.update_tool_signature(["add"], is_remove=False)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Invalid name: None"):
        a.update_tool_signature({"type": "function", "function": {}}, is_remove=False)
    with pytest.raises(ValueError, match="Invalid name: a b"):
        a.update_function_signature({"name": "a b"}, is_remove=False)
    assert "tools" not in a.llm_config  # type: ignore[operator]
    assert "functions" not in a.llm_config  # type: ignore[operator]


def test_registering_tools_keeps_usage_totals(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("x", usage={"prompt_tokens": 10, "completion_tokens": 1})
    a = ConversableAgent("a", llm_config=fake_llm.llm_config(model="gpt-4"))
    a.client.create(messages=[{"role": "user", "content": "hi"}])

    @a.register_for_llm(description="d")
    def f(x: int) -> int:
        return x

    assert a.get_total_usage()["gpt-4"]["prompt_tokens"] == 10  # type: ignore[index]


def test_async_registered_tools_run_concurrently(fake_llm: FakeLLMServer) -> None:
    assistant, user = make_pair(fake_llm)

    # Each call waits until all four have started: run one at a time, the first would wait out
    # OVERLAP_TIMEOUT and answer an error instead of its result.
    all_started = asyncio.Barrier(4)

    @user.register_for_execution()
    @assistant.register_for_llm(description="Wait, then answer.")
    async def wait(n: int) -> str:
        await asyncio.wait_for(all_started.wait(), OVERLAP_TIMEOUT)
        return f"waited {n}"

    fake_llm.add_reply(tool_calls=[{"name": "wait", "arguments": {"n": i}} for i in range(4)])
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="go", silent=True)
    assert tool_results(fake_llm.requests[1]) == [f"waited {i}" for i in range(4)]


def test_sync_tools_do_not_block_the_event_loop(fake_llm: FakeLLMServer) -> None:
    assistant, user = make_pair(fake_llm)

    # Each blocking call waits in its thread until all four are blocked there together: tools
    # run one after another (or on the loop) would break the barrier after OVERLAP_TIMEOUT.
    all_blocked = threading.Barrier(4, timeout=OVERLAP_TIMEOUT)

    @user.register_for_execution()
    @assistant.register_for_llm(description="Block.")
    def block(n: int) -> str:
        all_blocked.wait()
        return f"blocked {n}"

    fake_llm.add_reply(tool_calls=[{"name": "block", "arguments": {"n": i}} for i in range(4)])
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="go", silent=True)
    assert tool_results(fake_llm.requests[1]) == [f"blocked {i}" for i in range(4)]
