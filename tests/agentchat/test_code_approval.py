"""Code that requires approval (``code_execution_config={..., "requires_approval": True}``), in
two-agent chats on the fake LLM: the executing agent's human (a review function, the IOStream,
an override of ``get_human_input``) approves the blocks of a message before they run, rejects
them with feedback the model reads as their output, or ends the chat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import parley
from parley import AssistantAgent, UserProxyAgent
from parley.agentchat import APPROVE, EXIT, ReviewRequest
from parley.coding import CodeBlock, LocalCommandLineCodeExecutor
from parley.events import ToolApproval
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

WRITE = "```python\nopen('ran.txt', 'a').write('ran\\n')\nprint('wrote')\n```"
TWO_BLOCKS = "```python\nprint('one')\n```\n\n```sh\necho two\n```"


def executor_config(work: Path, **extra: Any) -> dict[str, Any]:
    return {"executor": LocalCommandLineCodeExecutor(work_dir=work), **extra}


def legacy_config(work: Path, **extra: Any) -> dict[str, Any]:
    return {"work_dir": str(work), "use_docker": False, **extra}


def agents(
    fake_llm: FakeLLMServer, config: dict[str, Any], cls: type[UserProxyAgent] = UserProxyAgent
) -> tuple[UserProxyAgent, AssistantAgent]:
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = cls(
        "user",
        human_input_mode="NEVER",
        code_execution_config=config,
        is_termination_msg=lambda m: "TERMINATE" in str(m.get("content")),
    )
    return user, assistant


def runs(work: Path) -> int:
    path = work / "ran.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


def last_sent(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"])


@pytest.mark.parametrize("form", [executor_config, legacy_config])
def test_approved_code_runs_and_the_review_sees_the_blocks(
    fake_llm: FakeLLMServer, tmp_path: Path, form: Any
) -> None:
    user, assistant = agents(fake_llm, form(tmp_path, requires_approval=True))
    seen: list[ReviewRequest] = []
    user.register_human_review(lambda request: seen.append(request) or APPROVE)
    fake_llm.add_reply(WRITE)
    fake_llm.add_reply("TERMINATE")
    result = user.initiate_chat(assistant, message="Write the file.", silent=True)

    assert runs(tmp_path) == 1
    assert last_sent(fake_llm.requests[1]).startswith("exitcode: 0 (execution succeeded)")
    (request,) = seen
    assert request.code_blocks == (
        CodeBlock(code="open('ran.txt', 'a').write('ran\\n')\nprint('wrote')", language="python"),
    )
    assert request.tool_call is None
    assert request.is_approval
    assert (request.agent, request.sender) == ("user", "assistant")
    assert request.message["content"] == WRITE
    assert "Approve running this code block?" in request.prompt
    assert "open('ran.txt', 'a')" in request.prompt
    assert result.human_input == [""]


@pytest.mark.parametrize("form", [executor_config, legacy_config])
def test_rejected_code_does_not_run_and_the_model_reads_the_feedback(
    fake_llm: FakeLLMServer, tmp_path: Path, form: Any
) -> None:
    user, assistant = agents(fake_llm, form(tmp_path, requires_approval=True))
    answers = iter(["Don't write files; print instead.", APPROVE])
    user.register_human_review(lambda request: next(answers))
    fake_llm.add_reply(WRITE)
    fake_llm.add_reply("```python\nprint('hello')\n```")
    fake_llm.add_reply("TERMINATE")
    result = user.initiate_chat(assistant, message="Say hello.", silent=True)

    assert runs(tmp_path) == 0
    _, second, third = fake_llm.requests
    assert last_sent(second) == (
        "exitcode: 1 (execution failed)\nCode output: "
        "Error: the human rejected the code: Don't write files; print instead."
    )
    assert last_sent(third).startswith("exitcode: 0 (execution succeeded)")
    assert "hello" in last_sent(third)
    assert result.human_input == ["Don't write files; print instead.", ""]


def test_exit_rejects_the_code_and_ends_the_chat_after_the_turn(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    user, assistant = agents(fake_llm, executor_config(tmp_path, requires_approval=True))
    user.register_human_review(lambda request: EXIT)
    fake_llm.add_reply(WRITE)
    fake_llm.add_reply("never asked for")
    result = user.initiate_chat(assistant, message="Write the file.", silent=True)

    assert runs(tmp_path) == 0
    assert result.termination_reason == "human_exit"
    assert len(fake_llm.requests) == 1  # the turn's reply was sent; no turn came after it
    assert result.chat_history[-1]["content"] == (
        "exitcode: 1 (execution failed)\nCode output: "
        "Error: the human rejected the code and ended the conversation."
    )
    assert result.human_input == ["exit"]


def test_the_console_is_asked_once_for_all_the_blocks_of_a_message(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    user, assistant = agents(fake_llm, legacy_config(tmp_path, requires_approval=True))
    fake_llm.add_reply(TWO_BLOCKS)
    fake_llm.add_reply(TWO_BLOCKS)
    fake_llm.add_reply("TERMINATE")
    console = IOScripted(["", "Only Python, please."])
    with IOStream.set_default(console):
        user.initiate_chat(assistant, message="Count.")

    first, second = console.prompts
    assert first.startswith("Approve running these 2 code blocks?")
    assert second == first
    assert "```python\nprint('one')\n```" in first
    assert "```sh\necho two\n```" in first
    assert "'exit'" in first
    ran = last_sent(fake_llm.requests[1])
    assert "one\n" in ran
    assert "two" in ran
    assert "NOT RUNNING THE CODE: Error: the human rejected the code: Only Python" in console.text
    assert last_sent(fake_llm.requests[2]).endswith("rejected the code: Only Python, please.")


def test_an_override_of_get_human_input_answers(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    asked: list[str] = []

    class Proxy(UserProxyAgent):  # the AutoGen way to put a custom UI in front of the human
        def get_human_input(self, prompt: str) -> str:
            asked.append(prompt)
            return "Not today."

    user, assistant = agents(fake_llm, executor_config(tmp_path, requires_approval=True), Proxy)
    fake_llm.add_reply(WRITE)
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="Write the file.", silent=True)
    (prompt,) = asked
    assert "open('ran.txt'" in prompt
    assert runs(tmp_path) == 0
    assert last_sent(fake_llm.requests[1]).endswith(
        "Error: the human rejected the code: Not today."
    )


class ClosedInput(IOScripted):
    """A console whose input is closed (a script run with ``< /dev/null``)."""

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        raise EOFError("EOF when reading a line")


def test_a_closed_input_refuses_the_code(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    user, assistant = agents(fake_llm, executor_config(tmp_path, requires_approval=True))
    fake_llm.add_reply(WRITE)
    fake_llm.add_reply("TERMINATE")
    with IOStream.set_default(ClosedInput([])):
        user.initiate_chat(assistant, message="Write the file.", silent=True)
    assert runs(tmp_path) == 0
    assert last_sent(fake_llm.requests[1]) == (
        "exitcode: 1 (execution failed)\nCode output: "
        "Error: the code was not run: no human can answer (the input is closed)."
    )


@pytest.mark.parametrize("form", [executor_config, legacy_config])
@pytest.mark.parametrize("extra", [{}, {"requires_approval": False}])
def test_without_requires_approval_code_runs_unasked(
    fake_llm: FakeLLMServer, tmp_path: Path, form: Any, extra: dict[str, Any]
) -> None:
    # AutoGen's default is unchanged: a human who cannot answer is never asked.
    user, assistant = agents(fake_llm, form(tmp_path, **extra))
    fake_llm.add_reply(WRITE)
    fake_llm.add_reply("TERMINATE")
    with IOStream.set_default(IOScripted([])) as console:
        user.initiate_chat(assistant, message="Write the file.", silent=True)
    assert console.prompts == []
    assert runs(tmp_path) == 1


def test_the_key_is_not_a_run_code_keyword(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    called: list[dict[str, Any]] = []

    class Proxy(UserProxyAgent):
        def run_code(self, code: str, **kwargs: Any) -> tuple[int, str, None]:
            called.append(kwargs)
            return 0, "ran", None

    config = legacy_config(tmp_path, requires_approval=True)
    user, assistant = agents(fake_llm, config, Proxy)
    user.register_human_review(lambda request: APPROVE)
    fake_llm.add_reply(WRITE)
    fake_llm.add_reply("TERMINATE")
    user.initiate_chat(assistant, message="Write the file.", silent=True)
    (kwargs,) = called
    assert "requires_approval" not in kwargs
    assert kwargs["work_dir"] == str(tmp_path)
    assert config == legacy_config(tmp_path, requires_approval=True)  # the caller's, untouched


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_a_bad_requires_approval_is_refused_when_the_agent_is_built(
    tmp_path: Path, value: Any
) -> None:
    with pytest.raises(ValueError, match="'requires_approval' in code_execution_config"):
        UserProxyAgent(
            "user", code_execution_config=legacy_config(tmp_path, requires_approval=value)
        )


def test_a_run_yields_the_approvals_as_input_requests(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    user, assistant = agents(fake_llm, executor_config(tmp_path, requires_approval=True))

    def archive(folder: str) -> str:
        return f"archived {folder}"

    parley.register_function(
        archive, caller=assistant, executor=user, description="Archive.", requires_approval=True
    )
    fake_llm.add_reply(
        tool_calls=[{"name": "archive", "arguments": {"folder": "logs"}, "id": "c1"}]
    )
    fake_llm.add_reply(WRITE)
    fake_llm.add_reply("TERMINATE")
    answers = iter(["", "Not today."])
    requests: list[Any] = []
    response = user.run(assistant, message="Archive, then write.", max_turns=4)
    for event in response.events:
        if event.type == "input_request":
            requests.append(event.content)
            event.content.respond(next(answers))
    tool, code = requests
    assert tool.tool_call == ToolApproval(
        name="archive", arguments={"folder": "logs"}, call_id="c1"
    )
    assert (tool.agent, tool.sender) == ("user", "assistant")
    assert code.tool_call is None
    assert (code.agent, code.sender) == ("user", "assistant")
    assert code.prompt.startswith("Approve running this code block?\n```python\nopen('ran.txt'")
    assert runs(tmp_path) == 0
    assert last_sent(fake_llm.requests[2]).endswith(
        "Error: the human rejected the code: Not today."
    )
    assert response.messages[-1]["content"] == "TERMINATE"
