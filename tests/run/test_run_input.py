"""A run's human: its questions come as input request events and the chat waits for
``respond`` (sync, async, AG2's ``event.content.respond``); tool approvals come the same way,
carrying the call; ``input_timeout`` bounds the wait; the agent alone with a user proxy
(``recipient=None``); AG2's own code samples run unchanged."""

from __future__ import annotations

import asyncio
import builtins
from typing import Any

import pytest

import parley as autogen
from parley import AssistantAgent, UserProxyAgent
from parley.events import BaseEvent, InputRequestEvent, TextEvent
from parley.exceptions import InputRequestError, InputTimeoutError, RunNotFinishedError
from parley.testing import FakeLLMServer

from .._approval_tools import add_delete_file
from ._support import kinds, of, read_into, round_trips


def asked_pair(fake_llm: FakeLLMServer) -> tuple[UserProxyAgent, AssistantAgent]:
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="ALWAYS", code_execution_config=False)
    return user, assistant


def test_the_chat_waits_for_respond_and_takes_the_answer(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("How can I help?").add_reply("Done.")
    user, assistant = asked_pair(fake_llm)
    response = user.run(assistant, message="hello")
    answers = iter(["tell me more", "exit"])
    events: list[BaseEvent] = []
    for event in response.events:
        events.append(event)
        if event.type == "input_request":
            assert isinstance(event, InputRequestEvent)
            event.respond(next(answers))

    requests = of(events, "input_request")
    assert [(r.agent, r.sender) for r in requests] == [("user", "assistant")] * 2
    assert "assistant" in requests[0].prompt
    assert requests[0].tool_call is None
    assert [r.value for r in of(events, "input_response")] == ["tell me more", "exit"]
    texts = [(t.sender, t.content) for t in of(events, "text")]
    assert texts == [
        ("user", "hello"),
        ("assistant", "How can I help?"),
        ("user", "tell me more"),
        ("assistant", "Done."),
    ]
    # the request, then the answer, then what came of it
    order = kinds(events)
    first = order.index("input_request")
    assert order[first : first + 3] == ["input_request", "input_response", "text"]
    assert of(events, "termination")[0].termination_reason == "human_exit"
    assert response.chat_result.human_input == ["tell me more", "exit"]
    round_trips(events)
    # answered already, or after the run: a clear error
    with pytest.raises(InputRequestError):
        requests[0].respond("again")


async def test_async_runs_answer_with_a_respond_and_ag2s_awaited_respond(
    fake_llm: FakeLLMServer,
) -> None:
    fake_llm.add_reply("How can I help?").add_reply("Sure.")
    user, assistant = asked_pair(fake_llm)
    response = await user.a_run(assistant, message="hello")
    count = 0
    async for event in response.events:
        if event.type == "input_request":
            count += 1
            if count == 1:
                await event.a_respond("more")
            else:
                await event.content.respond("exit")  # AG2's async processors await it
    assert count == 2
    assert (await response.chat_result).human_input == ["more", "exit"]
    messages = await response.messages
    assert [m["content"] for m in messages] == ["hello", "How can I help?", "more", "Sure."]


def test_a_tool_approval_is_an_input_request_carrying_the_call(fake_llm: FakeLLMServer) -> None:
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    deleted: list[str] = []
    add_delete_file(assistant, user, deleted)
    fake_llm.add_reply(tool_calls=[{"name": "delete_file", "arguments": {"path": "a.txt"}}])
    fake_llm.add_reply(tool_calls=[{"name": "delete_file", "arguments": {"path": "b.txt"}}])
    fake_llm.add_reply("TERMINATE")
    response = user.run(assistant, message="clean up")
    answers = iter(["", "not that one"])  # approve, then reject with feedback
    events = []
    for event in response.events:
        events.append(event)
        if isinstance(event, InputRequestEvent):
            event.respond(next(answers))

    requests = of(events, "input_request")
    assert [(r.tool_call.name, r.tool_call.arguments) for r in requests] == [
        ("delete_file", {"path": "a.txt"}),
        ("delete_file", {"path": "b.txt"}),
    ]
    calls = of(events, "tool_call")
    assert [r.tool_call.call_id for r in requests] == [c.tool_calls[0].id for c in calls]
    assert all(r.agent == "user" for r in requests)
    ran = of(events, "executed_function")
    assert [(f.approval, f.is_exec_success) for f in ran] == [
        ("approved", True),
        ("rejected", False),
    ]
    assert "not that one" in ran[1].content
    assert deleted == ["a.txt"]
    round_trips(events)


def test_nobody_answering_within_input_timeout_stops_the_run(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("How can I help?")
    user, assistant = asked_pair(fake_llm)
    response = user.run(assistant, message="hello", input_timeout=0.05)
    seen: list[BaseEvent] = []
    with pytest.raises(InputTimeoutError, match=r"within 0\.05s"):
        read_into(seen, response.events)  # the request is seen, and not answered
    assert [e.type for e in seen[-2:]] == ["input_request", "error"]
    with pytest.raises(ValueError, match="input_timeout"):
        user.run(assistant, message="hello", input_timeout=0)


def test_the_outcome_read_while_an_answer_is_awaited_says_so(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("How can I help?")
    user, assistant = asked_pair(fake_llm)
    response = user.run(assistant, message="hello")
    with pytest.raises(RunNotFinishedError, match="input_request"):
        _ = response.summary
    for event in response.events:
        if event.type == "input_request":
            event.respond("exit")
    assert response.summary == "How can I help?"


def test_an_agent_alone_talks_with_a_user_proxy_running_its_tools(
    fake_llm: FakeLLMServer,
) -> None:
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())

    def weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    fake_llm.add_reply(tool_calls=[{"name": "weather", "arguments": {"city": "Oslo"}}])
    fake_llm.add_reply("It is sunny in Oslo. TERMINATE")
    response = assistant.run(message="Weather in Oslo?", tools=weather, max_turns=3)
    events = list(response.events)

    starts = of(events, "chat_start")
    assert [(s.sender, s.recipient) for s in starts] == [("user", "assistant")]
    (ran,) = of(events, "executed_function")
    assert (ran.func_name, ran.content, ran.recipient) == ("weather", "sunny in Oslo", "user")
    assert of(events, "termination")[0].termination_reason == "is_termination_msg"
    assert response.last_speaker == "assistant"
    # the tool was the run's only: the agent's model no longer hears of it
    assert "tools" not in assistant.llm_config or not assistant.llm_config["tools"]
    assert "weather" not in assistant.run_executor.function_map
    # the request told the model about the tool
    assert fake_llm.requests[0]["tools"][0]["function"]["name"] == "weather"


def test_ag2s_sample_with_user_input_runs_unchanged(fake_llm: FakeLLMServer) -> None:
    # As AG2's documentation writes it (its LLMConfig aside: an AutoGen 0.2 llm_config here).
    llm_config = fake_llm.llm_config()
    fake_llm.add_reply("I am fine, thank you!")

    agent = autogen.ConversableAgent(
        name="Assistant", llm_config=llm_config, system_message="You are an assistant for the user"
    )

    response = agent.run(
        message="Hello, how are you?",
        max_turns=10,
        user_input=True,
    )

    for event in response.events:
        print(event)

        if event.type == "input_request":
            event.content.respond("exit")

    assert response.summary == "I am fine, thank you!"
    assert response.messages[-1]["content"] == "I am fine, thank you!"


def test_ag2s_process_prints_the_chat_and_asks_the_console(
    fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_llm.add_reply("I am fine, thank you!")
    agent = autogen.ConversableAgent(name="Assistant", llm_config=fake_llm.llm_config())
    prompts: list[str] = []

    def typed(prompt: str = "") -> str:
        prompts.append(prompt)
        return "exit"

    monkeypatch.setattr(builtins, "input", typed)
    response = agent.run(message="Hello, how are you?", user_input=True)
    response.process()
    out = capsys.readouterr().out
    assert "user (to Assistant):" in out
    assert "Hello, how are you?" in out
    assert "Assistant (to user):" in out
    assert "I am fine, thank you!" in out
    assert "TERMINATING RUN" in out
    assert len(prompts) == 1
    assert "Assistant" in prompts[0]
    assert response.summary == "I am fine, thank you!"


def test_run_iter_yields_the_kinds_asked_for(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("How can I help?").add_reply("Bye.")
    user, assistant = asked_pair(fake_llm)
    response = user.run_iter(assistant, message="hello", yield_on=[TextEvent])
    got: list[tuple[str, Any]] = []
    answers = iter(["thanks", "exit"])
    for event in response:
        got.append((event.type, getattr(event.content, "content", None)))
        if isinstance(event, InputRequestEvent):
            event.respond(next(answers))
    assert got == [
        ("text", "hello"),
        ("text", "How can I help?"),
        ("input_request", None),
        ("text", "thanks"),
        ("text", "Bye."),
        ("input_request", None),
    ]
    assert response.summary == "Bye."


async def test_a_run_iter_starts_at_the_first_iteration(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("Hi there.")
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    response = assistant.a_run_iter(message="hello", max_turns=1)
    await asyncio.sleep(0)
    assert fake_llm.requests == []  # not started yet
    types = [event.type async for event in response]
    assert "run_completion" not in types
    assert types[-1] == "chat_end"
    assert await response.summary == "Hi there."


def test_cancel_stops_a_run_waiting_for_its_human(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("How can I help?")
    user, assistant = asked_pair(fake_llm)
    response = user.run(assistant, message="hello")
    seen: list[BaseEvent] = []

    def cancel_when_asked(event: BaseEvent) -> None:
        if isinstance(event, InputRequestEvent):
            response.cancel()

    with pytest.raises(asyncio.CancelledError):
        read_into(seen, response.events, cancel_when_asked)
    assert seen[-1].type == "error"
    assert seen[-1].content.error_type == "CancelledError"
    request = next(e for e in seen if isinstance(e, InputRequestEvent))
    with pytest.raises(InputRequestError, match="ended"):
        request.respond("too late")


def test_a_code_approval_carries_the_blocks_and_a_rejection_is_not_a_run(
    fake_llm: FakeLLMServer, tmp_path: Any
) -> None:
    from parley.coding import LocalCommandLineCodeExecutor

    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={
            "executor": LocalCommandLineCodeExecutor(work_dir=tmp_path),
            "requires_approval": True,
        },
        is_termination_msg=lambda m: "TERMINATE" in str(m.get("content")),
    )
    write = "```python\nopen('ran.txt', 'a').write('ran')\nprint('wrote')\n```"
    fake_llm.add_reply(write).add_reply("```sh\necho two\n```").add_reply("TERMINATE")
    response = user.run(assistant, message="write the file")
    answers = iter(["", "no"])  # approve the first message's code, reject the second's
    events: list[BaseEvent] = []
    for event in response.events:
        events.append(event)
        if isinstance(event, InputRequestEvent):
            event.respond(next(answers))

    requests = of(events, "input_request")
    assert [r.tool_call for r in requests] == [None, None]
    assert [[(b.language, b.code.strip()) for b in r.code_blocks] for r in requests] == [
        [("python", "open('ran.txt', 'a').write('ran')\nprint('wrote')")],
        [("sh", "echo two")],
    ]
    assert all(r.agent == "user" and r.sender == "assistant" for r in requests)
    started = of(events, "execute_code_block")
    ran = of(events, "executed_code_block")
    assert [s.approval for s in started] == ["approved", "rejected"]
    assert [(r.approval, r.exit_code) for r in ran] == [("approved", 0), ("rejected", 1)]
    assert "wrote" in ran[0].output
    assert ran[1].output.endswith("the human rejected the code: no")
    assert (tmp_path / "ran.txt").read_text() == "ran"  # the approved block ran, once
    round_trips(events)


def test_a_plain_question_carries_no_code_blocks(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("```python\nprint(1)\n```")
    user, assistant = asked_pair(fake_llm)
    response = user.run(assistant, message="hello")
    asked = []
    for event in response.events:
        if isinstance(event, InputRequestEvent):
            asked.append((event.content.code_blocks, event.content.tool_call))
            event.respond("exit")
    assert asked == [(None, None)]
