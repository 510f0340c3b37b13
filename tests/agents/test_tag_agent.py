"""TagAgent on the fake server: the tool protocol, the built-in and user tools, corrections sent
back to the model, the step limit, memory, prompts, and the agent inside two-agent and group
chats."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from parley import ConversableAgent, GroupChat, GroupChatManager
from parley.agentchat import ReviewRequest
from parley.agents import TagAgent, TagPrompts
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

pytestmark = pytest.mark.timeout(30)


def make(server: FakeLLMServer, **kwargs: Any) -> TagAgent:
    return TagAgent("scout", llm_config={"config_list": server.config_list()}, **kwargs)


def script(server: FakeLLMServer, *replies: str) -> None:
    for reply in replies:
        server.add_reply(reply)


def sent(server: FakeLLMServer, request: int) -> str:
    """The last message of a request: what the agent told the model after its previous reply."""
    return str(server.requests[request]["messages"][-1]["content"])


def system(server: FakeLLMServer, request: int = 0) -> str:
    message = server.requests[request]["messages"][0]
    assert message["role"] == "system"
    return str(message["content"])


def add(text: str) -> str:
    """Add whole numbers written with plus signs.

    More lines that the tool list leaves out.
    """
    return str(sum(int(part) for part in text.split("+")))


# -- the protocol ------------------------------------------------------------------------------


def test_end_run_ends_with_its_input_as_the_reply(fake_llm: FakeLLMServer) -> None:
    script(fake_llm, "  <TOOL: END_RUN>\n  Paris  \n</TOOL>\n")
    agent = make(fake_llm)

    assert agent.run("Capital of France?") == "Paris"
    assert agent.stop_reason == "end_run"
    assert len(fake_llm.requests) == 1
    first = fake_llm.requests[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user"]
    assert "Capital of France?" in first[1]["content"]


def test_a_sync_user_tool_gets_the_input_and_its_result_goes_back(fake_llm: FakeLLMServer) -> None:
    script(fake_llm, "<TOOL: ADD>2+3+4</TOOL>", "<TOOL: END_RUN>9</TOOL>")
    agent = make(fake_llm, tools={"ADD": add})

    assert agent.run("Add 2, 3 and 4.") == "9"
    assert sent(fake_llm, 1) == "Result of ADD:\n9"
    assert "- ADD: Add whole numbers written with plus signs." in system(fake_llm)
    assert "More lines" not in system(fake_llm)


async def test_an_async_user_tool_is_awaited(fake_llm: FakeLLMServer) -> None:
    seen: list[str] = []

    async def lookup(text: str) -> str:
        await asyncio.sleep(0)
        seen.append(text)
        return f"{text} is 42"

    script(fake_llm, "<TOOL: LOOKUP>the answer</TOOL>", "<TOOL: END_RUN>42</TOOL>")
    agent = make(fake_llm, tools={"LOOKUP": lookup})

    assert await agent.a_run("Look it up.") == "42"
    assert seen == ["the answer"]
    assert sent(fake_llm, 1) == "Result of LOOKUP:\nthe answer is 42"
    assert "- LOOKUP: (no description)" in system(fake_llm)


def test_a_reply_that_is_not_a_tool_call_gets_the_protocol_reminder(
    fake_llm: FakeLLMServer,
) -> None:
    script(
        fake_llm,
        "I think the answer is 4.",
        "Sure: <TOOL: END_RUN>4</TOOL>",  # the call must be the whole reply
        "<TOOL: END_RUN>4</TOOL>",
    )
    agent = make(fake_llm)

    assert agent.run("2+2?") == "4"
    reminder = TagPrompts().protocol_reminder
    assert sent(fake_llm, 1) == reminder
    assert sent(fake_llm, 2) == reminder
    assert fake_llm.requests[1]["messages"][-2] == {
        "role": "assistant",
        "content": "I think the answer is 4.",
    }


def test_an_unknown_tool_is_named_back_with_the_tools_there_are(fake_llm: FakeLLMServer) -> None:
    script(fake_llm, "<TOOL: SEARCH>weather</TOOL>", "<TOOL: END_RUN>unknown</TOOL>")
    agent = make(fake_llm, tools={"ADD": add})

    agent.run("Weather?")
    assert sent(fake_llm, 1) == (
        "There is no tool named SEARCH. The tools are: "
        "ASK_USER, TELL_USER, READ_README, END_RUN, ADD."
    )


def test_several_tool_calls_in_one_reply_run_none(fake_llm: FakeLLMServer) -> None:
    calls: list[str] = []

    def record(text: str) -> str:
        calls.append(text)
        return "ok"

    script(
        fake_llm,
        "<TOOL: NOTE>a</TOOL>\n<TOOL: NOTE>b</TOOL>",
        "<TOOL: NOTE>a</TOOL>",
        "<TOOL: END_RUN>done</TOOL>",
    )
    agent = make(fake_llm, tools={"NOTE": record})

    assert agent.run("Take notes.") == "done"
    assert sent(fake_llm, 1) == TagPrompts().one_tool_per_reply
    assert calls == ["a"]


def test_a_tool_that_raises_is_reported_to_the_model(fake_llm: FakeLLMServer) -> None:
    script(
        fake_llm, "<TOOL: ADD>two+three</TOOL>", "<TOOL: ADD>2+3</TOOL>", "<TOOL: END_RUN>5</TOOL>"
    )
    agent = make(fake_llm, tools={"ADD": add})

    assert agent.run("Add two and three.") == "5"
    assert sent(fake_llm, 1).startswith("The tool ADD failed: ValueError: invalid literal")
    assert sent(fake_llm, 2) == "Result of ADD:\n5"


def test_a_tool_returning_something_else_than_text_is_a_bug(fake_llm: FakeLLMServer) -> None:
    script(fake_llm, "<TOOL: COUNT>abc</TOOL>")
    agent = make(fake_llm, tools={"COUNT": len})

    with pytest.raises(TypeError, match="tool 'COUNT' returned int; a tool must return a str"):
        agent.run("Count.")


def test_the_step_limit_ends_a_run_that_never_finishes() -> None:
    with FakeLLMServer(default="Let me think about it some more.") as server:
        agent = make(server, max_steps=3)
        reply = agent.run("Solve it.")
        assert len(server.requests) == 3
    assert reply == "I stopped after 3 steps without finishing the task."
    assert agent.stop_reason == "max_steps"
    assert [m["role"] for m in agent.memory] == ["user", *["assistant", "user"] * 3]


# -- the built-in tools ------------------------------------------------------------------------


def test_ask_user_asks_through_the_io_stream(fake_llm: FakeLLMServer) -> None:
    script(fake_llm, "<TOOL: ASK_USER>Which city?</TOOL>", "<TOOL: ASK_USER>Sure?</TOOL>")
    script(fake_llm, "<TOOL: END_RUN>Lyon</TOOL>")
    agent = make(fake_llm)

    with IOStream.set_default(IOScripted(["Lyon", "  "])) as io:
        assert agent.run("Book a hotel.") == "Lyon"
    assert io.prompts == ["scout asks: Which city?\n> ", "scout asks: Sure?\n> "]
    assert sent(fake_llm, 1) == "Result of ASK_USER:\nLyon"
    assert sent(fake_llm, 2) == "Result of ASK_USER:\nThe user gave no answer."


def test_ask_user_goes_to_a_registered_review_function(fake_llm: FakeLLMServer) -> None:
    seen: list[ReviewRequest] = []

    def review(request: ReviewRequest) -> str:
        seen.append(request)
        return "Tuesday"

    script(fake_llm, "<TOOL: ASK_USER>Which day?</TOOL>", "<TOOL: END_RUN>Tuesday</TOOL>")
    agent = make(fake_llm)
    agent.register_human_review(review)

    with IOStream.set_default(IOScripted()):  # the console is never asked
        assert agent.run("Plan a meeting.") == "Tuesday"
    assert [r.prompt for r in seen] == ["scout asks: Which day?\n> "]
    assert seen[0].agent == "scout"
    assert sent(fake_llm, 1) == "Result of ASK_USER:\nTuesday"


def test_tell_user_prints_through_the_io_stream(fake_llm: FakeLLMServer) -> None:
    script(fake_llm, "<TOOL: TELL_USER>Working on it.</TOOL>", "<TOOL: END_RUN>done</TOOL>")
    agent = make(fake_llm)

    with IOStream.set_default(IOScripted()) as io:
        agent.run("Do it.")
    assert io.printed == ["scout: Working on it.\n"]
    assert sent(fake_llm, 1) == "Result of TELL_USER:\nThe user was shown your message."


def test_read_readme_reads_the_named_file(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# Widget\nRun `widget --fast` to go fast.\n", encoding="utf-8")
    script(fake_llm, "<TOOL: READ_README></TOOL>", "<TOOL: END_RUN>widget --fast</TOOL>")
    agent = make(fake_llm, readme=readme)

    assert agent.run("How do I go fast?") == "widget --fast"
    assert (
        sent(fake_llm, 1) == "Result of READ_README:\n# Widget\nRun `widget --fast` to go fast.\n"
    )


def test_read_readme_without_a_readme_says_none_was_named(fake_llm: FakeLLMServer) -> None:
    script(fake_llm, "<TOOL: READ_README>README.md</TOOL>", "<TOOL: END_RUN>?</TOOL>")
    agent = make(fake_llm)

    agent.run("Read the docs.")
    assert sent(fake_llm, 1) == (
        "Result of READ_README:\n"
        "There is no README to read: the user did not name one for this agent."
    )


def test_a_readme_deleted_after_construction_is_reported(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("x", encoding="utf-8")
    script(fake_llm, "<TOOL: READ_README></TOOL>", "<TOOL: END_RUN>?</TOOL>")
    agent = make(fake_llm, readme=str(readme))
    readme.unlink()

    agent.run("Read it.")
    assert sent(fake_llm, 1).startswith(f"The tool READ_README failed: cannot read {readme}")


# -- memory --------------------------------------------------------------------------------


def test_each_run_starts_fresh_and_its_transcript_stays_inspectable(
    fake_llm: FakeLLMServer,
) -> None:
    script(fake_llm, "<TOOL: END_RUN>one</TOOL>", "<TOOL: END_RUN>two</TOOL>")
    agent = make(fake_llm)

    agent.run("First.")
    first = agent.memory
    agent.run("Second.")

    assert [m["content"] for m in first] == [
        "Your task:\nFirst.\n\nReply with one tool call.",
        "<TOOL: END_RUN>one</TOOL>",
    ]
    assert len(fake_llm.requests[1]["messages"]) == 2  # system + the new task only
    assert agent.memory[0]["content"].startswith("Your task:\nSecond.")
    transcript = agent.last_transcript
    assert transcript is not None
    assert (transcript.task, transcript.reply, transcript.steps) == ("Second.", "two", 1)
    agent.memory.clear()  # a copy: the agent's memory is not touched
    assert len(agent.memory) == 2


def test_keep_memory_continues_the_previous_transcript(fake_llm: FakeLLMServer) -> None:
    script(fake_llm, "<TOOL: END_RUN>noted</TOOL>", "<TOOL: END_RUN>blue</TOOL>")
    agent = make(fake_llm, keep_memory=True)

    agent.run("My favourite colour is blue.")
    assert agent.run("What is my favourite colour?") == "blue"

    second = [m["content"] for m in fake_llm.requests[1]["messages"][1:]]
    assert second == [
        "Your task:\nMy favourite colour is blue.\n\nReply with one tool call.",
        "<TOOL: END_RUN>noted</TOOL>",
        "Your task:\nWhat is my favourite colour?\n\nReply with one tool call.",
    ]
    assert len(agent.memory) == 4


def test_reset_forgets_the_runs(fake_llm: FakeLLMServer) -> None:
    script(fake_llm, "<TOOL: END_RUN>noted</TOOL>", "<TOOL: END_RUN>?</TOOL>")
    agent = make(fake_llm, keep_memory=True)

    agent.run("Remember 7.")
    agent.reset()
    assert (agent.memory, agent.last_transcript, agent.stop_reason) == ([], None, None)
    agent.run("What did I say?")
    assert len(fake_llm.requests[1]["messages"]) == 2


async def test_one_run_at_a_time_per_agent(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("<TOOL: END_RUN>slow</TOOL>", delay=0.5)
    agent = make(fake_llm)

    first = asyncio.create_task(agent.a_run("One."))
    await asyncio.sleep(0.1)
    with pytest.raises(RuntimeError, match="already running a task"):
        await agent.a_run("Two.")
    assert await first == "slow"


# -- prompts -----------------------------------------------------------------------------------


def test_the_system_message_is_the_manifesto_then_the_protocol(fake_llm: FakeLLMServer) -> None:
    script(fake_llm, "<TOOL: END_RUN>ok</TOOL>")
    agent = make(fake_llm, manifesto="You are {name}, a {careful} scout.", tools={"ADD": add})

    agent.run("Go.")
    text = system(fake_llm)
    assert text.startswith("You are scout, a {careful} scout.\n\nHow you work:")
    assert "<TOOL: NAME>input</TOOL>" in text
    tools = text.split("Tools:\n", 1)[1].splitlines()
    assert [line.split(":")[0] for line in tools] == [
        "- ASK_USER",
        "- TELL_USER",
        "- READ_README",
        "- END_RUN",
        "- ADD",
    ]
    assert agent.system_message == text
    assert agent.description == "You are scout, a {careful} scout."


def test_every_prompt_can_be_replaced(fake_llm: FakeLLMServer) -> None:
    prompts = TagPrompts(
        manifesto="M",
        protocol="P {tools}",
        task="T<{task}>",
        tool_result="R[{tool}]={result}",
        protocol_reminder="USE TAGS",
        unknown_tool="NO {tool}",
    )
    script(
        fake_llm,
        "hello",
        "<TOOL: NOPE>x</TOOL>",
        "<TOOL: TELL_USER>hi</TOOL>",
        "<TOOL: END_RUN>ok</TOOL>",
    )
    agent = make(fake_llm, prompts=prompts.replace(told_user="seen"))

    with IOStream.set_default(IOScripted()):
        agent.run("{task} go")
    first = fake_llm.requests[0]["messages"]
    assert first[0]["content"].startswith("M\n\nP - ASK_USER:")
    assert first[1]["content"] == "T<{task} go>"  # a value is never filled in again
    assert [sent(fake_llm, i) for i in (1, 2, 3)] == ["USE TAGS", "NO NOPE", "R[TELL_USER]=seen"]


def test_assigning_prompts_changes_the_next_run(fake_llm: FakeLLMServer) -> None:
    script(fake_llm, "<TOOL: END_RUN>ok</TOOL>")
    agent = make(fake_llm)
    agent.prompts = agent.prompts.replace(manifesto="You are terse.")

    agent.run("Go.")
    assert system(fake_llm).startswith("You are terse.\n\n")
    with pytest.raises(TypeError, match="built from its prompts"):
        agent.update_system_message("other")


def test_prompts_missing_a_placeholder_are_refused() -> None:
    with pytest.raises(ValueError, match=r"TagPrompts.task must contain the placeholder \{task\}"):
        TagPrompts(task="Do the thing.")
    with pytest.raises(ValueError, match=r"protocol must contain the placeholder \{tools\}"):
        TagPrompts().replace(protocol="Use tools.")
    with pytest.raises(ValueError, match="no prompt named 'manifest'; the prompts are: manifesto"):
        TagPrompts().replace(manifest="x")
    with pytest.raises(TypeError, match=r"TagPrompts\.told_user must be a str"):
        TagPrompts(told_user=None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"tools": {"search": add}}, ValueError, "tool name 'search' is not valid"),
        ({"tools": {"END_RUN": add}}, ValueError, "'END_RUN' is a built-in tool"),
        ({"tools": {"ADD": "add"}}, TypeError, "tool 'ADD' must be a function"),
        ({"tools": {"TWO": lambda a, b: a}}, TypeError, "must accept one argument"),
        ({"tools": [add]}, TypeError, "tools must be a mapping"),
        ({"system_message": "hi"}, TypeError, "pass manifesto="),
        ({"max_steps": 0}, ValueError, "max_steps must be a positive int"),
        ({"readme": "no/such/README.md"}, ValueError, "readme 'no/such/README.md' is not a file"),
        ({"prompts": {"manifesto": "x"}}, TypeError, "prompts must be a TagPrompts"),
    ],
)
def test_mistakes_in_the_arguments_are_refused_at_construction(
    fake_llm: FakeLLMServer, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        make(fake_llm, **kwargs)


def test_an_agent_without_a_model_is_refused() -> None:
    with pytest.raises(ValueError, match="needs a model: give it llm_config"):
        TagAgent("scout")


# -- in chats ----------------------------------------------------------------------------------


def test_in_a_two_agent_chat_the_agent_replies_with_its_result(fake_llm: FakeLLMServer) -> None:
    script(fake_llm, "<TOOL: ADD>1+1</TOOL>", "<TOOL: END_RUN>2</TOOL>")
    agent = make(fake_llm, tools={"ADD": add})
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    with IOStream.set_default(IOScripted()):
        result = user.initiate_chat(agent, message="What is 1+1?", max_turns=1)
    assert result.chat_history is not None
    assert [m["content"] for m in result.chat_history] == ["What is 1+1?", "2"]
    assert "What is 1+1?" in str(fake_llm.requests[0]["messages"][1]["content"])


def test_in_a_group_chat_the_agent_speaks_its_result(fake_llm: FakeLLMServer) -> None:
    script(fake_llm, "<TOOL: END_RUN>The plan: start small.</TOOL>")
    agent = make(fake_llm)
    critic = ConversableAgent(
        "critic", llm_config=False, human_input_mode="NEVER", default_auto_reply="Looks good."
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    group = GroupChat(
        [agent, critic], messages=[], max_round=3, speaker_selection_method="round_robin"
    )
    manager = GroupChatManager(group, llm_config=False)

    with IOStream.set_default(IOScripted()):
        user.initiate_chat(manager, message="Plan the launch.")

    assert [(m.get("name"), m["content"]) for m in group.messages] == [
        ("user", "Plan the launch."),
        ("scout", "The plan: start small."),
        ("critic", "Looks good."),
    ]
    assert len(fake_llm.requests) == 1  # round robin: no selection requests
    assert "Plan the launch." in str(fake_llm.requests[0]["messages"][1]["content"])
