"""Tools that require approval, in two-agent chats on the fake LLM: the executor's human (a
review function, the IOStream, an override of ``get_human_input``) approves each call before it
runs, rejects it with feedback the model reads, or ends the chat."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

import parley
from parley import AssistantAgent, UserProxyAgent
from parley.agentchat import APPROVE, EXIT, PendingToolCall, ReviewRequest
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

WAIT = 20.0  # seconds: the bound of every wait here (each takes milliseconds)


class Tools:
    """``delete_file`` (requires approval) and ``read_file`` (does not) on a pair of agents;
    ``ran`` lists the calls that ran."""

    def __init__(self, fake_llm: FakeLLMServer, **user: Any) -> None:
        self.assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
        options: dict[str, Any] = {"human_input_mode": "NEVER", "code_execution_config": False}
        self.user = UserProxyAgent("user", **{**options, **user})
        self.ran: list[tuple[str, str]] = []
        lock = threading.Lock()

        def delete_file(path: str) -> str:
            with lock:
                self.ran.append(("delete_file", path))
            return f"deleted {path}"

        def read_file(path: str) -> str:
            with lock:
                self.ran.append(("read_file", path))
            return f"contents of {path}"

        parley.register_function(
            delete_file,
            caller=self.assistant,
            executor=self.user,
            description="Delete a file.",
            requires_approval=True,
        )
        parley.register_function(
            read_file, caller=self.assistant, executor=self.user, description="Read a file."
        )


def call(name: str, path: str, ident: str) -> dict[str, Any]:
    return {"name": name, "arguments": {"path": path}, "id": ident}


# Two calls needing approval around one that needs none.
THREE_CALLS = [
    call("delete_file", "a.txt", "call_1"),
    call("read_file", "b.txt", "call_2"),
    call("delete_file", "c.txt", "call_3"),
]


def tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_an_approved_call_runs_and_the_review_sees_the_call(fake_llm: FakeLLMServer) -> None:
    tools = Tools(fake_llm)
    seen: list[ReviewRequest] = []

    def review(request: ReviewRequest) -> str:
        seen.append(request)
        return APPROVE

    tools.user.register_human_review(review)
    fake_llm.add_reply(tool_calls=[call("delete_file", "old.log", "call_1")])
    fake_llm.add_reply("TERMINATE")
    result = tools.user.initiate_chat(tools.assistant, message="Clean up.", silent=True)

    assert tools.ran == [("delete_file", "old.log")]
    assert tool_results(fake_llm.requests[1]) == ["deleted old.log"]
    (request,) = seen
    assert request.tool_call == PendingToolCall("delete_file", {"path": "old.log"}, "call_1")
    assert (request.agent, request.sender) == ("user", "assistant")
    assert request.human_input_mode == "NEVER"
    # The message a review sees holds that one call, as the model wrote it.
    (shown,) = request.message["tool_calls"]
    assert shown["id"] == "call_1"
    assert shown["function"] == {"name": "delete_file", "arguments": '{"path": "old.log"}'}
    assert "delete_file" in request.prompt
    assert '"path": "old.log"' in request.prompt
    assert result.human_input == [""]
    assert result.termination_reason != "human_exit"


def test_a_rejected_call_does_not_run_and_the_model_reads_the_feedback(
    fake_llm: FakeLLMServer,
) -> None:
    tools = Tools(fake_llm)
    answers = iter(["Not that one: delete tmp.txt instead.", None])
    tools.user.register_human_review(lambda request: next(answers))
    fake_llm.add_reply(tool_calls=[call("delete_file", "thesis.tex", "call_1")])
    fake_llm.add_reply(tool_calls=[call("delete_file", "tmp.txt", "call_2")])
    fake_llm.add_reply("TERMINATE")
    result = tools.user.initiate_chat(tools.assistant, message="Free some space.", silent=True)

    # The rejected call never ran; the model read the feedback as its result and tried again.
    assert tools.ran == [("delete_file", "tmp.txt")]
    _, second, third = fake_llm.requests
    assert tool_results(second) == [
        "Error: the human rejected the call of delete_file: Not that one: delete tmp.txt instead."
    ]
    assert tool_results(third)[-1] == "deleted tmp.txt"
    assert result.human_input == ["Not that one: delete tmp.txt instead.", ""]


def test_exit_rejects_the_call_and_ends_the_chat_after_the_turn(fake_llm: FakeLLMServer) -> None:
    tools = Tools(fake_llm)
    seen: list[str | None] = []

    def review(request: ReviewRequest) -> str:
        seen.append(request.tool_call.call_id if request.tool_call else None)
        return EXIT

    tools.user.register_human_review(review)
    fake_llm.add_reply(tool_calls=THREE_CALLS)
    fake_llm.add_reply("never asked for")
    result = tools.user.initiate_chat(tools.assistant, message="Tidy up.", silent=True)

    assert seen == ["call_1"]  # the later call needing approval was not asked about
    assert tools.ran == [("read_file", "b.txt")]  # the call without approval ran
    assert result.termination_reason == "human_exit"
    assert len(fake_llm.requests) == 1  # the turn's reply was sent; no turn came after it
    last = result.chat_history[-1]
    assert [r["content"] for r in last["tool_responses"]] == [
        "Error: the human rejected the call of delete_file and ended the conversation.",
        "contents of b.txt",
        "Error: the call of delete_file was not run: the conversation is ending.",
    ]
    assert result.human_input == ["exit"]


def test_the_console_is_asked_through_the_iostream_one_call_at_a_time(
    fake_llm: FakeLLMServer,
) -> None:
    tools = Tools(fake_llm)
    fake_llm.add_reply(tool_calls=THREE_CALLS)
    fake_llm.add_reply("TERMINATE")
    console = IOScripted(["", "Keep c.txt."])
    with IOStream.set_default(console):
        result = tools.user.initiate_chat(tools.assistant, message="Tidy up.")

    first, second = console.prompts  # read_file needs no approval: never asked about
    assert "delete_file (call ID: call_1)" in first
    assert '"path": "a.txt"' in first
    assert "delete_file (call ID: call_3)" in second
    assert "'exit'" in second
    assert sorted(tools.ran) == [("delete_file", "a.txt"), ("read_file", "b.txt")]
    assert tool_results(fake_llm.requests[1]) == [
        "deleted a.txt",
        "contents of b.txt",
        "Error: the human rejected the call of delete_file: Keep c.txt.",
    ]
    assert "NOT RUNNING FUNCTION delete_file" in console.text
    assert result.human_input == ["", "Keep c.txt."]


def test_an_override_of_get_human_input_answers(fake_llm: FakeLLMServer) -> None:
    asked: list[str] = []

    class Proxy(UserProxyAgent):  # the AutoGen way to put a custom UI in front of the human
        def get_human_input(self, prompt: str) -> str:
            asked.append(prompt)
            return "No deleting today."

    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = Proxy("user", human_input_mode="NEVER", code_execution_config=False)
    deleted: list[str] = []

    @user.register_for_execution(requires_approval=True)
    @assistant.register_for_llm(description="Delete a file.")
    def delete_file(path: str) -> str:
        deleted.append(path)
        return "deleted"

    fake_llm.add_reply(tool_calls=[call("delete_file", "a.txt", "call_1")])
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="Tidy up.", silent=True)
    assert len(asked) == 1
    assert "delete_file" in asked[0]
    assert deleted == []
    assert tool_results(fake_llm.requests[1]) == [
        "Error: the human rejected the call of delete_file: No deleting today."
    ]


async def test_asking_is_one_at_a_time_while_approved_calls_run(fake_llm: FakeLLMServer) -> None:
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    first_running = asyncio.Event()
    second_asked = asyncio.Event()
    asking = 0
    most_asking = 0
    order: list[str] = []

    async def slow_write(path: str) -> str:
        first_running.set()
        # Runs while the human is asked about the next call: only the asking is serialised.
        await asyncio.wait_for(second_asked.wait(), WAIT)
        return f"wrote {path}"

    async def write(path: str) -> str:
        return f"wrote {path}"

    parley.register_function(
        slow_write, caller=assistant, executor=user, description="w", requires_approval=True
    )
    parley.register_function(
        write, caller=assistant, executor=user, description="w", requires_approval=True
    )

    async def review(request: ReviewRequest) -> str:
        nonlocal asking, most_asking
        assert request.tool_call is not None
        asking += 1
        most_asking = max(most_asking, asking)
        order.append(request.tool_call.arguments["path"])
        if request.tool_call.name == "write" and not second_asked.is_set():
            second_asked.set()
            await asyncio.wait_for(first_running.wait(), WAIT)
        await asyncio.sleep(0.01)  # room for another question to overlap, were it asked
        asking -= 1
        return APPROVE

    user.register_human_review(review)
    fake_llm.add_reply(
        tool_calls=[
            {"name": "slow_write", "arguments": {"path": "1"}},
            {"name": "write", "arguments": {"path": "2"}},
            {"name": "write", "arguments": {"path": "3"}},
        ]
    )
    fake_llm.add_reply("TERMINATE")
    await asyncio.wait_for(user.a_initiate_chat(assistant, message="go", silent=True), WAIT)
    assert order == ["1", "2", "3"]
    assert most_asking == 1
    assert tool_results(fake_llm.requests[1]) == ["wrote 1", "wrote 2", "wrote 3"]


def test_a_call_with_invalid_arguments_is_refused_before_asking(fake_llm: FakeLLMServer) -> None:
    tools = Tools(fake_llm)
    seen: list[ReviewRequest] = []
    tools.user.register_human_review(lambda request: seen.append(request))
    fake_llm.add_reply(tool_calls=[{"name": "delete_file", "arguments": {"file": "a.txt"}}])
    fake_llm.add_reply("TERMINATE")
    tools.user.initiate_chat(tools.assistant, message="Tidy up.", silent=True)
    assert seen == []
    assert tools.ran == []
    (error,) = tool_results(fake_llm.requests[1])
    assert error.startswith("Error: Invalid arguments for delete_file")


def test_a_legacy_function_call_is_approved_too(fake_llm: FakeLLMServer) -> None:
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    ran: list[str] = []

    @user.register_for_execution(requires_approval=True)
    @assistant.register_for_llm(description="Delete a file.", api_style="function")
    def delete_file(path: str) -> str:
        ran.append(path)
        return "deleted"

    seen: list[ReviewRequest] = []
    user.register_human_review(lambda request: seen.append(request) or "no")
    fake_llm.add_reply(function_call={"name": "delete_file", "arguments": {"path": "a.txt"}})
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="Tidy up.", silent=True)
    assert ran == []
    (request,) = seen
    assert request.tool_call == PendingToolCall("delete_file", {"path": "a.txt"}, None)
    assert request.message["function_call"]["name"] == "delete_file"
    last = fake_llm.requests[1]["messages"][-1]
    assert last["content"] == "Error: the human rejected the call of delete_file: no"


def test_a_direct_execute_function_asks_too() -> None:
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    ran: list[str] = []

    @user.register_for_execution(requires_approval=True)
    def delete_file(path: str) -> str:
        ran.append(path)
        return "deleted"

    with IOStream.set_default(IOScripted(["", "exit"])) as console:
        assert user.execute_function({"name": "delete_file", "arguments": '{"path": "a"}'}) == (
            True,
            {"name": "delete_file", "role": "function", "content": "deleted"},
        )
        # Outside a chat "exit" only rejects: there is no chat to end.
        success, reply = user.execute_function(
            {"name": "delete_file", "arguments": '{"path": "b"}'}
        )
    assert not success
    assert "ended the conversation" in reply["content"]
    assert ran == ["a"]
    assert len(console.prompts) == 2


class ClosedInput(IOScripted):
    """A console whose input is closed (a script run with ``< /dev/null``)."""

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        raise EOFError("EOF when reading a line")


def test_a_closed_input_rejects_the_call_instead_of_crashing() -> None:
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    ran: list[str] = []

    @user.register_for_execution(requires_approval=True)
    def delete_file(path: str) -> str:
        ran.append(path)
        return "deleted"

    with IOStream.set_default(ClosedInput([])):
        success, reply = user.execute_function(
            {"name": "delete_file", "arguments": '{"path": "a"}'}
        )
    assert not success
    assert reply["content"] == (
        "Error: the call of delete_file was not run: no human can answer (the input is closed)."
    )
    assert ran == []


@pytest.mark.parametrize("mode", ["ALWAYS", "TERMINATE"])
def test_approval_is_asked_whatever_the_human_input_mode(
    fake_llm: FakeLLMServer, mode: str
) -> None:
    tools = Tools(fake_llm, human_input_mode=mode)
    fake_llm.add_reply(tool_calls=[call("delete_file", "a.txt", "call_1")])
    fake_llm.add_reply("TERMINATE")
    # ALWAYS: the message is reviewed (enter: auto-reply), then the call approved; the
    # TERMINATE message ends the chat (TERMINATE mode asks there too: exit).
    answers = ["", "", "exit"] if mode == "ALWAYS" else ["", "exit"]
    console = IOScripted(answers)
    with IOStream.set_default(console):
        tools.user.initiate_chat(tools.assistant, message="Tidy up.", silent=True)
    assert tools.ran == [("delete_file", "a.txt")]
    assert sum("Approve the call of delete_file" in p for p in console.prompts) == 1
