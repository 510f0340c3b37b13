"""AutonomousAgent on the fake model: the cycle, the human's answers, the limits, the commands
(files confined to the workspace, Python through a real executor, registered functions), and
the agent in chats."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest

from parley import ConversableAgent, GroupChat, GroupChatManager
from parley.agentchat import ReviewRequest
from parley.agents import AutonomousAgent
from parley.agents._autonomous_cycle import Authorise, Feedback, StopRun, parse_authorisation
from parley.coding import LocalCommandLineCodeExecutor
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

pytestmark = pytest.mark.timeout(60)

THOUGHTS = {
    "text": "I should write the file.",
    "reasoning": "The goal asks for it.",
    "plan": "- write it\n- finish",
    "criticism": "Be quick.",
    "speak": "Writing the file.",
}


def reply(command: str, **args: Any) -> str:
    return json.dumps({"thoughts": THOUGHTS, "command": {"name": command, "args": args}})


def make_agent(fake_llm: FakeLLMServer, tmp_path: Path, **kwargs: Any) -> AutonomousAgent:
    kwargs.setdefault("memory", False)
    kwargs.setdefault("workspace", tmp_path / "ws")
    kwargs.setdefault("goals", ["Write hello.txt"])
    llm = kwargs.pop("llm_config", {"config_list": fake_llm.config_list()})
    return AutonomousAgent("auto", llm_config=llm, **kwargs)


def system_texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "system"]


# -- a run -----------------------------------------------------------------------------------


async def test_a_run_thinks_asks_acts_and_completes(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.add_reply(reply("write_file", filename="hello.txt", text="hello"))
    fake_llm.add_reply(reply("task_complete", reason="hello.txt is written"))
    agent = make_agent(fake_llm, tmp_path, role="a careful file writer")

    with IOStream.set_default(IOScripted(["y", "y"])) as io:
        report = await agent.a_run("Then say goodbye")

    assert report == "hello.txt is written"
    assert agent.stop_reason == "task_complete"
    assert (tmp_path / "ws" / "hello.txt").read_text() == "hello"
    assert [(c.command, c.result) for c in agent.cycles] == [
        ("write_file", "Wrote 5 characters to hello.txt."),
        ("task_complete", "hello.txt is written"),
    ]
    assert agent.cycles[0].thoughts == THOUGHTS
    # The plan is shown, then the human is asked.
    assert "AUTO THOUGHTS: I should write the file." in io.text
    assert "PLAN:\n  - write it\n  - finish" in io.text
    assert 'NEXT ACTION: COMMAND = write_file  ARGUMENTS = {"filename": "hello.txt"' in io.text
    assert len(io.prompts) == 2
    assert "'y -N'" in io.prompts[0]

    first, second = fake_llm.requests
    prompt = first["messages"][0]["content"]
    assert prompt.startswith("You are auto, a careful file writer.")
    assert "GOALS:\n1. Write hello.txt\n2. Then say goodbye" in prompt  # the task is a goal
    assert "2. write_file: Write a text file in your workspace" in prompt
    assert '"filename": "<string: path of the file in the workspace>"' in prompt
    for section in ("CONSTRAINTS:", "RESOURCES:", "PERFORMANCE EVALUATION:", "REPLY FORMAT:"):
        assert section in prompt
    assert '"criticism"' in prompt
    assert first["messages"][1]["content"].startswith("The current time and date is ")
    assert first["messages"][-1]["role"] == "user"  # the trigger
    assert "tools" not in first
    # The next cycle sees its reply and the command's result.
    assert second["messages"][-3]["role"] == "assistant"
    assert json.loads(second["messages"][-3]["content"])["command"]["name"] == "write_file"
    assert second["messages"][-2] == {
        "role": "system",
        "content": "Command write_file returned: Wrote 5 characters to hello.txt.",
    }
    assert agent.system_message == prompt
    assert agent.description == "a careful file writer"


def test_the_sync_face_runs_the_same_loop(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.add_reply(reply("task_complete", reason="nothing to do"))
    agent = make_agent(fake_llm, tmp_path, continuous=True)
    with IOStream.set_default(IOScripted()):
        assert agent.run("") == "nothing to do"
    assert "GOALS:\n1. Write hello.txt\n\n" in fake_llm.requests[0]["messages"][0]["content"]


async def test_shutdown_also_ends_the_run(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.add_reply(reply("shutdown", reason="all done"))
    agent = make_agent(fake_llm, tmp_path, continuous=True)
    with IOStream.set_default(IOScripted()):
        assert await agent.a_run("") == "all done"
    assert agent.stop_reason == "task_complete"


# -- replies that are not clean JSON ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "```json\n" + reply("list_files") + "\n```",
        "Sure, here is my next step:\n" + reply("list_files") + "\nI hope that helps.",
        reply("list_files").replace("}}}", "},},}"),
        reply("list_files").replace('"', "'"),
    ],
    ids=["code fence", "text around", "trailing commas", "single quotes"],
)
async def test_broken_json_is_repaired_without_asking_again(
    fake_llm: FakeLLMServer, tmp_path: Path, text: str
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.md").write_text("x")
    fake_llm.add_reply(text)
    fake_llm.add_reply(reply("task_complete", reason="listed"))
    agent = make_agent(fake_llm, tmp_path, continuous=True)
    with IOStream.set_default(IOScripted()):
        assert await agent.a_run("") == "listed"
    assert agent.cycles[0].result == "notes.md"
    assert len(fake_llm.requests) == 2


async def test_a_reply_that_stays_broken_is_explained_and_retried_a_bounded_number_of_times(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    for _ in range(3):
        fake_llm.add_reply("I will now write the file.")
    agent = make_agent(fake_llm, tmp_path, continuous=True, json_retries=2)

    with IOStream.set_default(IOScripted()) as io:
        report = await agent.a_run("")

    assert agent.stop_reason == "invalid_reply"
    assert "could not be read after 3 tries" in report
    assert "no JSON object" in report
    assert len(fake_llm.requests) == 3
    retry = fake_llm.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "I will now write the file."}
    assert retry[-1]["role"] == "user"
    assert "could not be used: the reply contains no JSON object" in retry[-1]["content"]
    assert "the reply could not be read" in io.text


async def test_a_fixed_reply_continues_and_the_broken_one_leaves_the_history(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.add_reply('{"thoughts": {"text": "cut off')
    fake_llm.add_reply(reply("list_files"))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    agent = make_agent(fake_llm, tmp_path, continuous=True)
    with IOStream.set_default(IOScripted()):
        assert await agent.a_run("") == "ok"
    assert "not closed" in fake_llm.requests[1]["messages"][-1]["content"]
    last = fake_llm.requests[2]["messages"]
    assert not any("cut off" in str(m["content"]) for m in last)
    assert len(agent.cycles) == 2


async def test_a_reply_without_a_command_is_explained(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.add_reply(json.dumps({"thoughts": THOUGHTS}))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    agent = make_agent(fake_llm, tmp_path, continuous=True)
    with IOStream.set_default(IOScripted()):
        await agent.a_run("")
    assert 'the reply has no "command"' in fake_llm.requests[1]["messages"][-1]["content"]


async def test_an_unknown_command_is_an_error_the_model_sees_next(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.add_reply(reply("browse_website", url="https://example.com"))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    agent = make_agent(fake_llm, tmp_path, continuous=True)
    with IOStream.set_default(IOScripted()):
        await agent.a_run("")
    error = fake_llm.requests[1]["messages"][-2]["content"]
    assert error.startswith("Command browse_website returned: Error: unknown command")
    assert "read_file, write_file" in error
    assert agent.cycles[0].result.startswith("Error: unknown command 'browse_website'")


# -- the human -------------------------------------------------------------------------------


async def test_y_dash_n_authorises_the_next_n_commands(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    for i in range(4):
        fake_llm.add_reply(reply("write_file", filename=f"{i}.txt", text=str(i)))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    agent = make_agent(fake_llm, tmp_path)
    with IOStream.set_default(IOScripted(["y -3", "y", "y"])) as io:
        await agent.a_run("")
    assert len(io.prompts) == 3  # before cycles 1, 4 and 5
    assert "AUTHORISED: the next 3 commands." in io.text
    assert sorted(p.name for p in (tmp_path / "ws").iterdir()) == [f"{i}.txt" for i in range(4)]


async def test_n_stops_the_run_before_the_command(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.add_reply(reply("write_file", filename="hello.txt", text="hello"))
    agent = make_agent(fake_llm, tmp_path)
    with IOStream.set_default(IOScripted(["n"])):
        report = await agent.a_run("")
    assert agent.stop_reason == "human_stop"
    assert report == "Stopped: the human ended the run at cycle 1."
    assert not (tmp_path / "ws" / "hello.txt").exists()
    assert agent.cycles[0].command == "write_file"
    assert agent.cycles[0].result.startswith("Not run")


async def test_free_text_is_feedback_sent_to_the_model_instead_of_running(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.add_reply(reply("write_file", filename="hello.txt", text="hello"))
    fake_llm.add_reply(reply("write_file", filename="hello.txt", text="HELLO"))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    agent = make_agent(fake_llm, tmp_path)
    with IOStream.set_default(IOScripted(["Use capitals", "y", "y"])):
        await agent.a_run("")
    assert fake_llm.requests[1]["messages"][-2] == {"role": "user", "content": "Use capitals"}
    assert agent.cycles[0].feedback == "Use capitals"
    assert agent.cycles[0].result.startswith("Not run")
    assert (tmp_path / "ws" / "hello.txt").read_text() == "HELLO"


async def test_a_review_function_answers_for_the_human(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.add_reply(reply("write_file", filename="hello.txt", text="hello"))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    agent = make_agent(fake_llm, tmp_path)
    seen: list[ReviewRequest] = []

    async def review(request: ReviewRequest) -> str:
        seen.append(request)
        return ""  # approve

    agent.register_human_review(review)
    with IOStream.set_default(IOScripted()):  # no scripted answers: it is never asked
        assert await agent.a_run("") == "ok"
    assert json.loads(str(seen[0].message["content"]))["command"]["name"] == "write_file"
    assert "'y -N'" in seen[0].prompt
    assert (tmp_path / "ws" / "hello.txt").exists()


@pytest.mark.parametrize(
    ("answer", "meaning"),
    [
        ("y", Authorise(1)),
        ("", Authorise(1)),  # a review function's approval
        (" YES ", Authorise(1)),
        ("y -5", Authorise(5)),
        ("y-2", Authorise(2)),
        ("yes - 3", Authorise(3)),
        ("n", StopRun()),
        ("No", StopRun()),
        ("exit", StopRun()),
        ("y, but use capitals", Feedback("y, but use capitals")),
        ("nope", Feedback("nope")),
    ],
)
def test_the_authorisation_answers(answer: str, meaning: object) -> None:
    assert parse_authorisation(answer) == meaning


# -- limits ----------------------------------------------------------------------------------


async def test_the_cycle_limit_stops_the_run(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.responder = lambda body: reply("list_files")
    agent = make_agent(fake_llm, tmp_path, continuous=True, max_cycles=3)
    with IOStream.set_default(IOScripted()) as io:
        report = await agent.a_run("")
    assert agent.stop_reason == "cycle_limit"
    assert report == "Stopped: the limit of 3 cycles was reached."
    assert len(fake_llm.requests) == 3
    assert "auto finished (cycle_limit)" in io.text


async def test_the_budget_stops_the_run_after_the_cycle_that_reaches_it(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 100}
    fake_llm.responder = lambda body: {"content": reply("list_files"), "usage": usage}
    # $0.01 per 1k prompt tokens, $0.02 per 1k completion tokens: $0.012 a cycle.
    config = fake_llm.config_list(price=[0.01, 0.02])
    agent = make_agent(
        fake_llm, tmp_path, continuous=True, budget=0.03, llm_config={"config_list": config}
    )
    with IOStream.set_default(IOScripted()):
        report = await agent.a_run("")
    assert agent.stop_reason == "budget"
    assert len(agent.cycles) == 3
    assert [round(c.cost, 6) for c in agent.cycles] == [0.012] * 3
    assert report == "Stopped: the run cost $0.0360, reaching its budget of $0.0300."
    assert agent.get_total_usage()["total_cost"] == pytest.approx(0.036)  # type: ignore[index]


async def test_old_history_beyond_the_token_limit_is_not_sent(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    for i in range(4):
        fake_llm.add_reply(reply("write_file", filename=f"{i}.txt", text=f"text number {i}"))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    agent = make_agent(fake_llm, tmp_path, continuous=True, token_limit=150)
    with IOStream.set_default(IOScripted()):
        await agent.a_run("")
    last = json.dumps(fake_llm.requests[-1]["messages"])
    assert "3.txt" in last
    assert "0.txt" not in last


async def test_a_result_longer_than_the_token_limit_is_cut_not_dropped(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "big.txt").write_text("word " * 1000)
    fake_llm.add_reply(reply("read_file", filename="big.txt"))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    agent = make_agent(fake_llm, tmp_path, continuous=True, token_limit=100)
    with IOStream.set_default(IOScripted()):
        await agent.a_run("")
    (result,) = [m for m in fake_llm.requests[1]["messages"] if "returned" in m["content"]]
    assert result["content"].startswith("Command read_file returned: word word")
    assert result["content"].endswith("(cut: too long for the short-term memory)")
    assert len(result["content"]) < 600


# -- commands --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["../outside.txt", "sub/../../outside.txt", "/tmp/outside.txt"])
async def test_file_commands_stay_in_the_workspace(
    fake_llm: FakeLLMServer, tmp_path: Path, path: str
) -> None:
    if path.startswith("/tmp"):
        path = str(tmp_path / "outside.txt")
    fake_llm.add_reply(reply("write_file", filename=path, text="escaped"))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    agent = make_agent(fake_llm, tmp_path, continuous=True)
    with IOStream.set_default(IOScripted()):
        await agent.a_run("")
    assert not (tmp_path / "outside.txt").exists()
    assert "is outside your workspace" in agent.cycles[0].result
    assert "is outside your workspace" in fake_llm.requests[1]["messages"][-2]["content"]


async def test_the_file_commands(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    steps = [
        reply("write_file", filename="notes/a.txt", text="one"),
        reply("append_file", filename="notes/a.txt", text=" two"),
        reply("read_file", filename="notes/a.txt"),
        reply("list_files", directory="notes"),
        reply("delete_file", filename="notes/a.txt"),
        reply("read_file", filename="notes/a.txt"),
        reply("read_file"),
        reply("task_complete", reason="ok"),
    ]
    fake_llm.add(*steps)
    agent = make_agent(fake_llm, tmp_path, continuous=True)
    with IOStream.set_default(IOScripted()):
        await agent.a_run("")
    assert [c.result for c in agent.cycles[:-1]] == [
        "Wrote 3 characters to notes/a.txt.",
        "Appended 4 characters to notes/a.txt.",
        "one two",
        "notes/a.txt",
        "Deleted notes/a.txt.",
        "Error: there is no file 'notes/a.txt' in the workspace",
        "Error: read_file needs the argument(s) ['filename'] (its arguments: filename)",
    ]


async def test_python_runs_through_the_given_executor(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path / "ws")
    fake_llm.add_reply(reply("execute_python", code="print(6 * 7)"))
    fake_llm.add_reply(reply("write_file", filename="f.py", text="print('from a file')"))
    fake_llm.add_reply(reply("execute_python_file", filename="f.py"))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    agent = make_agent(fake_llm, tmp_path, continuous=True, code_executor=executor)
    with IOStream.set_default(IOScripted()):
        await agent.a_run("")
    assert "execute_python: Run Python code" in agent.system_message
    assert agent.cycles[0].result == "exit code 0\n42"
    assert agent.cycles[2].result == "exit code 0\nfrom a file"


async def test_an_executor_config_dict_runs_code_in_the_workspace(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.add_reply(reply("execute_python", code="open('made.txt', 'w').write('x')"))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    config = {"executor": "commandline-local"}
    agent = make_agent(fake_llm, tmp_path, continuous=True, code_executor=config)
    with IOStream.set_default(IOScripted()):
        await agent.a_run("")
    assert (tmp_path / "ws" / "made.txt").exists()
    assert config == {"executor": "commandline-local"}  # the caller's dict is unchanged


def test_without_an_executor_there_is_no_python_command(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    agent = make_agent(fake_llm, tmp_path)
    assert "execute_python" not in agent.system_message
    assert set(agent.command_table()) == {
        "read_file",
        "write_file",
        "append_file",
        "delete_file",
        "list_files",
        "task_complete",
    }
    with pytest.raises(ValueError, match="need a code executor"):
        make_agent(fake_llm, tmp_path, commands=["read_file", "execute_python"])


async def test_commands_can_be_chosen(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.add_reply(reply("write_file", filename="x.txt", text="x"))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    agent = make_agent(fake_llm, tmp_path, continuous=True, commands=["read_file", "task_complete"])
    with IOStream.set_default(IOScripted()):
        await agent.a_run("")
    assert "write_file" not in agent.system_message
    assert agent.cycles[0].result.startswith("Error: unknown command 'write_file'")
    with pytest.raises(ValueError, match="unknown built-in command"):
        make_agent(fake_llm, tmp_path, commands=["browse"])


async def test_registered_functions_are_commands(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.add_reply(reply("multiply", a=6, b=7))
    fake_llm.add_reply(reply("multiply", a="six"))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    agent = make_agent(fake_llm, tmp_path, continuous=True)

    @agent.register_for_execution()
    @agent.register_for_llm(description="Multiply two integers.")
    def multiply(a: Annotated[int, "first factor"], b: Annotated[int, "second factor"]) -> int:
        return a * b

    with IOStream.set_default(IOScripted()) as io:
        await agent.a_run("")
    prompt = fake_llm.requests[0]["messages"][0]["content"]
    assert 'multiply: Multiply two integers. Args: {"a": "<integer: first factor>"' in prompt
    assert "tools" not in fake_llm.requests[0]  # described in the prompt, not the tool API
    assert agent.cycles[0].result == "42"
    assert agent.cycles[1].result.startswith("Error:")  # the function's validation speaks
    assert "EXECUTING FUNCTION multiply" in io.text


async def test_a_function_map_entry_without_a_schema_is_a_command(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    def shout(text: str) -> str:
        """Say it loudly.

        More details the prompt does not need."""
        return text.upper()

    fake_llm.add_reply(reply("shout", text="hi"))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    agent = make_agent(fake_llm, tmp_path, continuous=True, function_map={"shout": shout})
    with IOStream.set_default(IOScripted()):
        await agent.a_run("")
    assert "shout: Say it loudly. Args: (not described)" in agent.system_message
    assert agent.cycles[0].result == "HI"


# -- long-term memory ------------------------------------------------------------------------


async def test_long_term_memory_recalls_cycles_that_left_the_short_term_history(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    from parley.memory import LongTermMemory

    memory = LongTermMemory()  # the default embedding model, offline
    fake_llm.add_reply(reply("write_file", filename="capital.txt", text="Paris is in France"))
    for i in range(3):
        fake_llm.add_reply(reply("write_file", filename=f"{i}.txt", text="filler"))
    fake_llm.add_reply(reply("task_complete", reason="ok"))
    agent = make_agent(fake_llm, tmp_path, continuous=True, memory=memory, token_limit=150)
    with IOStream.set_default(IOScripted()):
        await agent.a_run("")

    assert len(memory) == 5  # one memory per cycle
    first = memory.search("Paris France capital", k=1)[0].text
    assert first.startswith("Assistant reply: ")
    assert "Result: Wrote 18 characters to capital.txt.\nHuman feedback: none" in first
    recalled = [t for t in system_texts(fake_llm.requests[-1]) if t.startswith("This reminds")]
    assert len(recalled) == 1
    assert "capital.txt" in recalled[0]  # gone from the recent history, recalled from memory
    assert "capital.txt" not in json.dumps(
        [m for m in fake_llm.requests[-1]["messages"] if m["role"] != "system"]
    )
    assert "long-term memory" in agent.system_message


def test_without_the_memory_extra_the_error_names_the_fix(
    fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import parley.memory.embedding as embedding

    monkeypatch.setattr(embedding, "_loaded", {})
    monkeypatch.setitem(sys.modules, "wordllama", None)  # as if not installed
    with pytest.raises(ImportError, match=r"pip install 'parley\[memory\]'.*memory=False"):
        make_agent(fake_llm, tmp_path, memory=None)


# -- setup errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"goals": [f"g{i}" for i in range(6)]}, ValueError, "at most 5 goals"),
        ({"goals": "one goal"}, TypeError, "list of strings"),
        ({"system_message": "hi"}, TypeError, "prompts=AutonomousPrompts"),
        ({"max_cycles": 0}, ValueError, "max_cycles must be an integer >= 1"),
        ({"budget": 0}, ValueError, "budget must be a positive"),
        ({"code_executor": "local"}, TypeError, "code_executor must be"),
    ],
)
def test_setup_mistakes_are_refused_at_once(
    fake_llm: FakeLLMServer, tmp_path: Path, kwargs: dict[str, Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        make_agent(fake_llm, tmp_path, **kwargs)


# -- in chats --------------------------------------------------------------------------------


async def test_in_a_two_agent_chat_the_reply_is_the_report(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.add_reply(reply("task_complete", reason="Done: nothing needed"))
    agent = make_agent(fake_llm, tmp_path, goals=(), continuous=True)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    with IOStream.set_default(IOScripted()):
        result = await user.a_initiate_chat(agent, message="Check the workspace", max_turns=1)
    assert result.chat_history is not None
    assert result.chat_history[-1]["content"] == "Done: nothing needed"
    assert "GOALS:\n1. Check the workspace\n" in fake_llm.requests[0]["messages"][0]["content"]


async def test_a_speaker_in_a_group_chat(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.add_reply(reply("write_file", filename="plan.txt", text="the plan"))
    fake_llm.add_reply(reply("task_complete", reason="plan.txt holds the plan"))
    agent = make_agent(fake_llm, tmp_path, goals=(), continuous=True)
    critic = ConversableAgent(
        "critic", llm_config=False, human_input_mode="NEVER", default_auto_reply="Looks good."
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    group = GroupChat([agent, critic], [], max_round=3, speaker_selection_method="round_robin")
    manager = GroupChatManager(group, llm_config=False)
    with IOStream.set_default(IOScripted()):
        await user.a_initiate_chat(manager, message="Write a plan to plan.txt")
    said = [(m.get("name"), m["content"]) for m in group.messages]
    assert said == [
        ("user", "Write a plan to plan.txt"),
        ("auto", "plan.txt holds the plan"),
        ("critic", "Looks good."),
    ]
    assert (tmp_path / "ws" / "plan.txt").read_text() == "the plan"


# -- the embedded local model ------------------------------------------------------------------


@pytest.mark.local_model
@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_the_loop_runs_on_the_local_model_and_ends_within_its_limits(
    model_file: Path, tmp_path: Path
) -> None:
    """SmolLM2-135M: the loop runs and stops cleanly within its limits (its wisdom is not
    asserted: it may complete, fail to write JSON, or use up its cycles)."""
    from parley.local import MODEL_NAME, LocalLlamaClient, local_config_list

    agent = AutonomousAgent(
        "tiny",
        goals=["Write the word hello to hello.txt"],
        llm_config={"config_list": local_config_list(max_tokens=128)},
        workspace=tmp_path / "ws",
        memory=False,
        continuous=True,
        max_cycles=2,
        json_retries=1,
    )
    agent.register_model_client(LocalLlamaClient)
    with IOStream.set_default(IOScripted()) as io:
        report = await agent.a_run("")

    assert agent.stop_reason in {"task_complete", "cycle_limit", "invalid_reply"}
    assert report
    assert 1 <= len(agent.cycles) <= 2
    assert f"tiny finished ({agent.stop_reason})" in io.text
    usage = agent.client.total_usage_summary
    assert usage is not None
    assert usage[MODEL_NAME]["prompt_tokens"] > 0
    # At most 2 cycles of at most 2 tries each, 128 tokens a reply.
    assert 0 < usage[MODEL_NAME]["completion_tokens"] <= 4 * 128
