"""ReActAgent on FakeLLMServer: the loop, its requests, tools of every kind, the model's
mistakes, the iteration limit, and the agent in two-agent and group chats."""

from __future__ import annotations

import asyncio
import datetime
import json
from pathlib import Path
from typing import Annotated, Any

import pytest

from parley import ConversableAgent, GroupChat, GroupChatManager
from parley.agents import PythonTool, ReActAgent, Tool
from parley.agents.react import STOP_SEQUENCES, ReActStep
from parley.coding.local_commandline_code_executor import LocalCommandLineCodeExecutor
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

pytestmark = pytest.mark.timeout(60)


class Lookup:
    """A plain tool object: it answers from a table and remembers what it was asked."""

    name = "lookup"
    description = "finds the population of a city. Input: the city's name."

    def __init__(self) -> None:
        self.asked: list[str] = []

    def use(self, input: str) -> str:
        self.asked.append(input)
        return {"Paris": "2.1 million"}.get(input, "unknown city")


class Broken:
    name = "broken"
    description = "always fails"

    def use(self, input: str) -> str:
        raise RuntimeError(f"the service is down (asked {input!r})")


class AsyncClock:
    name = "clock"
    description = "tells the time in a city"

    async def use(self, input: str) -> str:
        await asyncio.sleep(0)
        return f"noon in {input}"


def react(fake_llm: FakeLLMServer, tools: list[Any] | None = None, **kwargs: Any) -> ReActAgent:
    return ReActAgent(
        "researcher",
        [Lookup()] if tools is None else tools,
        llm_config={"config_list": fake_llm.config_list()},
        **kwargs,
    )


def prompt_of(fake_llm: FakeLLMServer, i: int) -> str:
    return str(fake_llm.requests[i]["messages"][-1]["content"])


# -- the loop --------------------------------------------------------------------------------


def test_an_action_its_observation_and_a_final_answer(fake_llm: FakeLLMServer) -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 10}
    fake_llm.add_reply("I should look it up.\nAction: lookup\nAction Input: Paris", usage=usage)
    fake_llm.add_reply("I know it now.\nFinal Answer: About 2.1 million people.", usage=usage)
    lookup = Lookup()
    agent = react(fake_llm, [lookup])

    answer = agent.run("How many people live in Paris?")

    assert answer == "About 2.1 million people."
    assert lookup.asked == ["Paris"]
    assert agent.steps == [ReActStep("I should look it up.", "lookup", "Paris", "2.1 million")]
    assert agent.stop_reason == "final_answer"
    first, second = fake_llm.requests
    for request in (first, second):
        assert request["stop"] == list(STOP_SEQUENCES) == ["\nObservation:", "\n\tObservation:"]
        assert "tools" not in request  # described in the prompt, not through the tool API
        assert [m["role"] for m in request["messages"]] == ["user"]  # no system message given
    prompt = prompt_of(fake_llm, 0)
    assert "lookup: finds the population of a city. Input: the city's name." in prompt
    assert "[lookup]" in prompt
    today = datetime.date.today()
    assert any(str(d) in prompt for d in (today, today - datetime.timedelta(days=1)))
    assert prompt.endswith("Question: How many people live in Paris?\nThought:")
    assert prompt_of(fake_llm, 1) == prompt + (
        " I should look it up.\nAction: lookup\nAction Input: Paris\n"
        "Observation: 2.1 million\nThought:"
    )
    usage_total = agent.get_total_usage()
    assert usage_total is not None
    assert usage_total["fake-model"]["prompt_tokens"] == 200


async def test_the_async_face_and_an_async_tool(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("Action: clock\nAction Input: Lima")
    fake_llm.add_reply("Final Answer: It is noon in Lima.")
    agent = react(fake_llm, [AsyncClock()])

    assert await agent.a_run("What time is it in Lima?") == "It is noon in Lima."
    assert agent.steps[0].observation == "noon in Lima"


def test_text_past_the_stop_sequence_is_cut_by_the_server(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(
        "Look it up.\nAction: lookup\nAction Input: Paris\nObservation: 9 billion\n"
        "Thought: done\nFinal Answer: 9 billion"
    )
    fake_llm.add_reply("Final Answer: 2.1 million")
    lookup = Lookup()
    agent = react(fake_llm, [lookup])

    assert agent.run("Population of Paris?") == "2.1 million"
    assert lookup.asked == ["Paris"]
    assert "9 billion" not in prompt_of(fake_llm, 1)


def test_the_agent_cuts_an_observation_the_server_let_through(fake_llm: FakeLLMServer) -> None:
    # Spellings the stop sequences miss reach the agent, as everything does from a server that
    # ignores `stop`: the agent cuts them itself.
    fake_llm.add_reply(
        "Look it up.\nAction: lookup\nAction Input: Paris\n  OBSERVATION: 9 billion\n"
        "Final Answer: 9 billion"
    )
    fake_llm.add_reply("Final Answer: 2.1 million")
    lookup = Lookup()
    agent = react(fake_llm, [lookup])

    assert agent.run("Population of Paris?") == "2.1 million"
    assert lookup.asked == ["Paris"]
    assert "9 billion" not in prompt_of(fake_llm, 1)
    assert prompt_of(fake_llm, 1).endswith(
        "Action Input: Paris\nObservation: 2.1 million\nThought:"
    )


@pytest.mark.parametrize(
    "reply",
    [
        "ACTION : lookup\naction input:Paris",
        "Thought: look it up\nAction 1: Lookup\nAction Input 1: Paris",
        '**Action:** `lookup`\n**Action Input:** "Paris"',
        "Action: lookup[Paris]",
        "Action:lookup\nAction Input:\n  Paris  ",
    ],
)
def test_spelling_and_case_variants_of_the_action(fake_llm: FakeLLMServer, reply: str) -> None:
    fake_llm.add_reply(reply)
    fake_llm.add_reply("Final Answer: done")
    lookup = Lookup()
    react(fake_llm, [lookup]).run("Population of Paris?")
    assert lookup.asked == ["Paris"]


# -- the model's and the tools' mistakes become observations ---------------------------------


def test_an_unknown_tool_is_told_the_valid_ones(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("Action: search\nAction Input: Paris")
    fake_llm.add_reply("Final Answer: ok")
    agent = react(fake_llm, [Lookup(), AsyncClock()])

    agent.run("Population of Paris?")

    expected = "'search' is not a tool here. The valid tools are: lookup, clock."
    assert agent.steps[0].observation == expected
    assert f"Observation: {expected}\nThought:" in prompt_of(fake_llm, 1)


def test_a_tool_that_raises_is_reported_to_the_model(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("Action: broken\nAction Input: x")
    fake_llm.add_reply("Final Answer: the tool is broken")
    agent = react(fake_llm, [Broken()])

    assert agent.run("Try it") == "the tool is broken"
    expected = "Error: tool 'broken' raised RuntimeError: the service is down (asked 'x')"
    assert agent.steps[0].observation == expected
    assert expected in prompt_of(fake_llm, 1)


def test_a_reply_without_an_action_gets_a_format_error(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("Paris is lovely in spring.")
    fake_llm.add_reply("Final Answer: 2.1 million")
    agent = react(fake_llm)

    assert agent.run("Population of Paris?") == "2.1 million"
    (step,) = agent.steps
    assert (step.thought, step.action, step.input) == ("Paris is lovely in spring.", None, None)
    assert step.observation.startswith("Invalid format: the reply has no 'Action:' line")
    assert "'Action: <tool name>'" in step.observation
    assert "(tools: lookup)" in step.observation
    assert (
        " Paris is lovely in spring.\nObservation: Invalid format: the reply has no"
        in prompt_of(fake_llm, 1)
    )


def test_the_iteration_limit_ends_the_run_with_a_clear_reply(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda body: "Action: lookup\nAction Input: Paris"
    agent = react(fake_llm, max_iterations=3)

    answer = agent.run("Population of Paris?")

    assert answer.startswith("Stopped after 3 iterations without a final answer")
    assert agent.stop_reason == "max_iterations"
    assert len(fake_llm.requests) == 3
    assert len(agent.steps) == 3


# -- registered functions as tools -----------------------------------------------------------


def test_registered_functions_are_tools(fake_llm: FakeLLMServer) -> None:
    agent = react(fake_llm, tools=[])

    # Registered after construction: found when the run starts.
    @agent.register_for_execution()
    @agent.register_for_llm(description="shouts the text back")
    def shout(text: str) -> str:
        return text.upper() + "!"

    @agent.register_for_execution()
    @agent.register_for_llm(description="adds two integers")
    def add(a: Annotated[int, "first"], b: Annotated[int, "second"]) -> int:
        return a + b

    fake_llm.add_reply("Action: shout\nAction Input: hello, world")
    fake_llm.add_reply('Action: add\nAction Input: {"a": 2, "b": "40"}')
    fake_llm.add_reply("Action: add\nAction Input: 2 and 40")
    fake_llm.add_reply('Action: add\nAction Input: {"a": "two", "b": 40}')
    fake_llm.add_reply("Final Answer: 42")

    assert agent.run("Shout, then add 2 and 40") == "42"

    prompt = prompt_of(fake_llm, 0)
    assert "shout: shouts the text back" in prompt
    assert "add: adds two integers" in prompt
    assert "[shout, add]" in prompt
    assert "tools" not in fake_llm.requests[0]  # the schemas stay out of the request
    observations = [step.observation for step in agent.steps]
    assert observations[0] == "HELLO, WORLD!"  # one parameter: the raw input
    assert observations[1] == "42"  # several: a JSON object, converted to the annotations
    assert observations[2].startswith(
        "This tool takes several arguments (a, b): write its Action Input as one JSON object, "
        'e.g. {"a": "...", "b": "..."}. Got: 2 and 40'
    )
    assert "Invalid arguments for add" in observations[3]
    assert "a: " in observations[3]


def test_a_function_map_function_is_described_by_its_docstring(fake_llm: FakeLLMServer) -> None:
    def weather(city: str) -> str:
        """Today's weather in a city."""
        return f"sunny in {city}"

    fake_llm.add_reply("Action: weather\nAction Input: Rome")
    fake_llm.add_reply("Final Answer: sunny")
    agent = react(fake_llm, tools=[], function_map={"weather": weather})

    agent.run("Weather in Rome?")

    assert "weather: Today's weather in a city." in prompt_of(fake_llm, 0)
    assert agent.steps[0].observation == "sunny in Rome"


def test_a_function_only_registered_for_the_model_is_refused(fake_llm: FakeLLMServer) -> None:
    agent = react(fake_llm)

    @agent.register_for_llm(description="never runs")
    def orphan(x: str) -> str:
        return x

    with pytest.raises(ValueError, match=r"'orphan' is registered .* not for execution"):
        agent.run("anything")
    assert fake_llm.requests == []


# -- the Python tool -------------------------------------------------------------------------


def test_the_python_tool_runs_real_code(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    tool = PythonTool(LocalCommandLineCodeExecutor(work_dir=tmp_path, timeout=30))
    fake_llm.add_reply(
        "I will compute it.\nAction: python_repl\nAction Input:\n```python\nprint(6 * 7)\n```"
    )
    fake_llm.add_reply("Action: python_repl\nAction Input: 1 / 0")
    fake_llm.add_reply("Action: python_repl\nAction Input: `x = 1`")
    fake_llm.add_reply("Final Answer: 42")
    agent = react(fake_llm, [tool])

    assert agent.run("What is 6 times 7?") == "42"

    printed, failed, silent = (step.observation for step in agent.steps)
    assert printed == "42"
    assert failed.startswith("Error (exit code 1):")
    assert "ZeroDivisionError: division by zero" in failed
    assert silent.startswith("(the code printed nothing")
    assert "python_repl: runs a Python script" in prompt_of(fake_llm, 0)
    assert list(tmp_path.glob("*.py"))  # the code ran from files in the work dir


def test_the_python_tool_from_an_executor_config(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    tool = PythonTool(
        {"executor": "commandline-local", "commandline-local": {"work_dir": str(tmp_path)}},
        name="python",
    )
    assert isinstance(tool, Tool)
    assert asyncio.run(tool.use("print('hi')")) == "hi"


def test_the_python_tool_needs_an_executor() -> None:
    with pytest.raises(TypeError, match="PythonTool needs a code executor"):
        PythonTool(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs an 'executor' key"):
        PythonTool({"work_dir": "coding"})


# -- the prompt and the construction checks --------------------------------------------------


def test_a_custom_template_and_system_message(fake_llm: FakeLLMServer) -> None:
    template = (
        'Tools: {tools}\nAnswer as JSON like {"answer": 1} at the end.\n'
        "Q: {input}\nThought:{scratchpad}"
    )
    fake_llm.add_reply("Final Answer: 1")
    agent = react(fake_llm, prompt_template=template, system_message="Be brief.")

    agent.run("Which {input}?")

    messages = fake_llm.requests[0]["messages"]
    assert messages[0] == {"role": "system", "content": "Be brief."}
    assert messages[1]["content"] == (
        "Tools: lookup: finds the population of a city. Input: the city's name.\n"
        'Answer as JSON like {"answer": 1} at the end.\nQ: Which {input}?\nThought:'
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"prompt_template": "Q: {input}\n{tools}"}, ValueError, r"lacks \{scratchpad\}"),
        ({"prompt_template": "{tool}{input}"}, ValueError, r"lacks \{scratchpad\}, \{tools\}"),
        ({"max_iterations": 0}, ValueError, "max_iterations must be at least 1"),
        ({"max_iterations": 2.5}, TypeError, "max_iterations must be an int"),
        ({"tools": [Lookup(), Lookup()]}, ValueError, "two tools are named 'lookup'"),
        ({"tools": Lookup()}, TypeError, r"for one tool write tools=\[tool\]"),
        ({"tools": [len]}, TypeError, r"tools\[0\] is not a tool.*register it on the agent"),
    ],
)
def test_construction_mistakes_raise_at_once(
    fake_llm: FakeLLMServer, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        react(fake_llm, **kwargs)


def test_a_registered_function_named_like_a_tool_is_refused(fake_llm: FakeLLMServer) -> None:
    with pytest.raises(ValueError, match="two tools are named 'lookup'"):
        react(fake_llm, function_map={"lookup": lambda city: city})


def test_the_callers_tool_list_is_not_changed(fake_llm: FakeLLMServer) -> None:
    tools: list[Any] = [Lookup()]
    agent = react(fake_llm, tools)
    tools.append(AsyncClock())
    assert [t.name for t in agent.tools] == ["lookup"]


# -- in chats --------------------------------------------------------------------------------


def test_in_a_two_agent_chat_it_replies_with_the_final_answer(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("Action: lookup\nAction Input: Paris")
    fake_llm.add_reply("Final Answer: About 2.1 million.")
    agent = react(fake_llm)
    user = ConversableAgent("user", human_input_mode="NEVER", llm_config=False)

    with IOStream.set_default(IOScripted()):
        result = user.initiate_chat(agent, message="Population of Paris?", max_turns=1)

    assert result.chat_history is not None
    assert result.chat_history[-1] == {
        "content": "About 2.1 million.",
        "role": "user",
        "name": "researcher",
    }
    assert "Question: Population of Paris?" in prompt_of(fake_llm, 0)


def test_as_a_speaker_in_a_group_chat(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("Action: lookup\nAction Input: Paris")
    fake_llm.add_reply("Final Answer: About 2.1 million.")
    agent = react(fake_llm)
    writer = ConversableAgent(
        "writer", human_input_mode="NEVER", llm_config=False, default_auto_reply="Noted."
    )
    user = ConversableAgent("user", human_input_mode="NEVER", llm_config=False)
    group = GroupChat([agent, writer], [], max_round=3, speaker_selection_method="round_robin")
    manager = GroupChatManager(group, llm_config=False)

    with IOStream.set_default(IOScripted()):
        user.initiate_chat(manager, message="Population of Paris?")

    assert [(m.get("name"), m["content"]) for m in group.messages] == [
        ("user", "Population of Paris?"),
        ("researcher", "About 2.1 million."),
        ("writer", "Noted."),
    ]
    assert len(fake_llm.requests) == 2  # the loop's two steps; no speaker selection calls
    assert json.dumps(fake_llm.requests[0]).count("Population of Paris?") == 1
