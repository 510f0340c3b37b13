"""``agent.run(...)``'s events, in order and with their content, on the fake LLM through the real
SDK: a two-agent chat with a tool and a code block, a group chat, a nested chat, a streamed reply;
concurrent runs see only their own events; nothing listens once runs are over."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

import parley
from parley import AssistantAgent, ConversableAgent, GroupChat, GroupChatManager, UserProxyAgent
from parley._core import events as _core_events
from parley.events import BaseEvent, ErrorEvent, RunCompletionEvent
from parley.testing import FakeLLMServer

from ._support import kinds, of, round_trips


def tool_and_code_chat(fake_llm: FakeLLMServer, tmp_path: Path, **llm: Any) -> tuple[Any, Any]:
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config(**llm))
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={"work_dir": str(tmp_path), "use_docker": False},
    )

    def add(a: int, b: int) -> int:
        return a + b

    parley.register_function(add, caller=assistant, executor=user, description="Add.")
    fake_llm.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 2, "b": 3}}])
    fake_llm.add_reply("```python\nprint(2 + 3)\n```")
    fake_llm.add_reply("TERMINATE")
    return user, assistant


def test_a_two_agent_chat_with_a_tool_and_code(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    user, assistant = tool_and_code_chat(fake_llm, tmp_path)
    response = user.run(assistant, message="What is 2+3?")
    events = list(response.events)

    assert kinds(events) == [
        "run_start",
        "chat_start",
        "text",  # the question
        "tool_call",
        "execute_function",
        "executed_function",
        "tool_response",
        "text",  # the code block
        "execute_code_block",
        "executed_code_block",
        "text",  # its output
        "text",  # TERMINATE
        "termination",
        "chat_end",
        "run_completion",
    ]
    texts = of(events, "text")
    assert [(t.sender, t.recipient) for t in texts] == [
        ("user", "assistant"),
        ("assistant", "user"),
        ("user", "assistant"),
        ("assistant", "user"),
    ]
    assert texts[0].content == "What is 2+3?"
    assert "print(2 + 3)" in texts[1].content
    assert "5" in texts[2].content
    (call,) = of(events, "tool_call")
    assert call.sender == "assistant" and call.tool_calls[0].function.name == "add"
    assert call.tool_calls[0].function.arguments is not None
    (ran,) = of(events, "executed_function")
    assert (ran.func_name, ran.arguments, ran.content, ran.is_exec_success) == (
        "add",
        {"a": 2, "b": 3},
        "5",
        True,
    )
    assert ran.recipient == "user" and ran.call_id == call.tool_calls[0].id
    (result,) = of(events, "tool_response")
    assert result.tool_responses[0].tool_call_id == ran.call_id
    assert result.tool_responses[0].content == "5"
    (code,) = of(events, "execute_code_block")
    assert (code.code, code.language, code.code_block_count) == ("print(2 + 3)", "python", 1)
    (output,) = of(events, "executed_code_block")
    assert output.exit_code == 0 and "5" in output.output
    (termination,) = of(events, "termination")
    assert termination.termination_reason == "is_termination_msg"

    # one usage event per model call, each before the message it made
    usage_at = [i for i, e in enumerate(events) if e.type == "usage"]
    assert len(usage_at) == 3
    assert [events[i + 1].type for i in usage_at] == ["tool_call", "text", "text"]
    assert all(events[i].content.agent == "assistant" for i in usage_at)

    # every event of the chat names it; the run's completion holds the outcome
    chat_id = of(events, "chat_start")[0].chat_id
    assert {e.content.chat_id for e in events if e.type != "run_start"} == {chat_id}
    completion = events[-1]
    assert isinstance(completion, RunCompletionEvent)
    assert completion.content.history == response.messages
    assert response.chat_result.run_id == chat_id
    assert response.last_speaker == "assistant"
    assert response.summary == ""  # the last message, TERMINATE taken out
    assert response.cost is not None
    tokens = response.cost.usage_including_cached_inference.models["fake-model"].total_tokens
    assert tokens == sum(e.content.total_tokens for e in events if e.type == "usage")
    round_trips(events)


def test_a_streamed_reply_reassembles_to_the_stored_message(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    user, assistant = tool_and_code_chat(fake_llm, tmp_path, stream=True)
    events = list(user.run(assistant, message="What is 2+3?").events)

    deltas = [e.content for e in events if e.type == "stream"]
    assert deltas and all(d.agent == "assistant" and not d.reset for d in deltas)
    by_message: dict[str, str] = {}
    for delta in deltas:
        assert delta.message_id is not None
        by_message[delta.message_id] = by_message.get(delta.message_id, "") + delta.content
    streamed = [t for t in of(events, "text") if t.message_id in by_message]
    assert [t.content for t in streamed] == ["```python\nprint(2 + 3)\n```", "TERMINATE"]
    for text in streamed:
        assert by_message[text.message_id] == text.content
    # each message's deltas all come before it
    for i, event in enumerate(events):
        if event.type == "stream":
            later = [e for e in events[i:] if e.type == "text"]
            assert later[0].content.message_id == event.content.message_id
    round_trips(events)


def test_a_group_chat_names_each_speaker_once_per_round(fake_llm: FakeLLMServer) -> None:
    a, b, c = (
        ConversableAgent(n, llm_config=False, human_input_mode="NEVER", default_auto_reply=n)
        for n in ("a", "b", "c")
    )
    group = GroupChat([a, b, c], messages=[], max_round=4, speaker_selection_method="round_robin")
    manager = GroupChatManager(group, llm_config=False)
    response = a.run(manager, message="go")
    events = list(response.events)

    selections = of(events, "group_chat_run_chat")
    assert [s.speaker for s in selections] == ["b", "c", "a"]
    assert [s.last_speaker for s in selections] == ["a", "b", "c"]
    assert all(s.manager == "chat_manager" for s in selections)
    # each message once, from its speaker to the manager: the copies the manager passes on to
    # the other members are not events of their own
    texts = of(events, "text")
    assert [(t.sender, t.recipient, t.content) for t in texts] == [
        ("a", "chat_manager", "go"),
        ("b", "chat_manager", "b"),
        ("c", "chat_manager", "c"),
        ("a", "chat_manager", "a"),
    ]
    # selection, then that speaker's message
    order = [
        (e.type, getattr(e.content, "speaker", getattr(e.content, "sender", None)))
        for e in events
        if e.type in ("group_chat_run_chat", "text")
    ]
    assert order[1:3] == [("group_chat_run_chat", "b"), ("text", "b")]
    assert response.last_speaker == "a"
    round_trips(events)


def test_a_nested_chat_shows_inside_its_parent(fake_llm: FakeLLMServer) -> None:
    writer, critic, reviewer = (
        ConversableAgent(n, llm_config=False, human_input_mode="NEVER", default_auto_reply=r)
        for n, r in (("writer", "w"), ("critic", "c"), ("reviewer", "looks good"))
    )
    critic.register_nested_chats(
        [{"recipient": reviewer, "max_turns": 1, "summary_method": "last_msg"}], trigger=writer
    )
    events = list(writer.run(critic, message="draft", max_turns=1).events)

    starts = of(events, "chat_start")
    assert [(s.sender, s.recipient) for s in starts] == [
        ("writer", "critic"),
        ("critic", "reviewer"),
    ]
    outer, inner = starts
    assert outer.parent_chat_id is None and inner.parent_chat_id == outer.chat_id
    ends = of(events, "chat_end")
    assert [e.chat_id for e in ends] == [inner.chat_id, outer.chat_id]
    assert ends[0].summary == "looks good"
    texts = [(t.chat_id, t.sender, t.content) for t in of(events, "text")]
    assert texts == [
        (outer.chat_id, "writer", "draft"),
        (inner.chat_id, "critic", "draft"),
        (inner.chat_id, "reviewer", "looks good"),
        (outer.chat_id, "critic", "looks good"),
    ]
    round_trips(events)


def test_concurrent_runs_see_only_their_own_events() -> None:
    started = threading.Barrier(2, timeout=30)

    def pair(tag: str) -> tuple[ConversableAgent, ConversableAgent]:
        first = ConversableAgent(f"{tag}1", llm_config=False, human_input_mode="NEVER")
        second = ConversableAgent(f"{tag}2", llm_config=False, human_input_mode="NEVER")
        turns = iter(range(100))

        def answer(*args: Any, **kwargs: Any) -> tuple[bool, str]:
            n = next(turns)
            if n == 0:
                started.wait()  # both chats are under way before either goes on
            return True, f"{tag} {n}"

        for agent in (first, second):
            agent.register_reply([parley.Agent, None], answer)
        return first, second

    x1, x2 = pair("x")
    y1, y2 = pair("y")
    runs = {"x": x1.run(x2, message="x", max_turns=3), "y": y1.run(y2, message="y", max_turns=3)}
    seen: dict[str, list[BaseEvent]] = {}

    def read(tag: str) -> None:
        seen[tag] = list(runs[tag].events)

    readers = [threading.Thread(target=read, args=(tag,)) for tag in runs]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join(60)
    for tag, events in seen.items():
        other = "y" if tag == "x" else "x"
        names = {getattr(e.content, "sender", None) for e in events} - {None}
        assert names == {f"{tag}1", f"{tag}2"}
        assert all(t.content.startswith(tag) for t in of(events, "text"))
        assert len(of(events, "text")) == 6
        chat_ids = {e.content.chat_id for e in events if e.content.chat_id is not None}
        assert chat_ids == {runs[tag].chat_result.run_id}


async def test_concurrent_async_runs_on_one_loop_are_isolated() -> None:
    def pair(tag: str) -> tuple[ConversableAgent, ConversableAgent]:
        async def answer(*args: Any, **kwargs: Any) -> tuple[bool, str]:
            await asyncio.sleep(0)  # let the other run's chat step in between
            return True, f"{tag} says"

        agents = tuple(
            ConversableAgent(f"{tag}{i}", llm_config=False, human_input_mode="NEVER")
            for i in (1, 2)
        )
        for agent in agents:
            agent.register_reply([parley.Agent, None], answer)
        return agents  # type: ignore[return-value]

    (x1, x2), (y1, y2) = pair("x"), pair("y")
    x = await x1.a_run(x2, message="x", max_turns=4)
    y = await y1.a_run(y2, message="y", max_turns=4)

    async def read(response: Any) -> list[BaseEvent]:
        return [event async for event in response.events]

    xs, ys = await asyncio.wait_for(asyncio.gather(read(x), read(y)), 30)
    for events, tag in ((xs, "x"), (ys, "y")):
        senders = {t.sender for t in of(events, "text")}
        assert senders == {f"{tag}1", f"{tag}2"}
        assert len(of(events, "text")) == 8
    assert await x.summary == "x says"
    assert (await y.chat_result).termination_reason == "max_turns"


def test_a_failing_chat_ends_its_events_with_the_error(fake_llm: FakeLLMServer) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("this reply function fails")

    a = ConversableAgent("a", llm_config=False, human_input_mode="NEVER")
    b = ConversableAgent("b", llm_config=False, human_input_mode="NEVER")
    b.register_reply([parley.Agent, None], broken)
    response = a.run(b, message="hi")
    events: list[BaseEvent] = []
    with pytest.raises(RuntimeError, match="this reply function fails"):
        for event in response.events:
            events.append(event)
    assert isinstance(events[-1], ErrorEvent)
    assert events[-1].content.error_type == "RuntimeError"
    with pytest.raises(RuntimeError, match="this reply function fails"):
        _ = response.summary
    round_trips(events)


def test_nothing_listens_once_the_runs_are_over(fake_llm: FakeLLMServer) -> None:
    assert not _core_events.listening()
    a = ConversableAgent("a", llm_config=False, human_input_mode="NEVER", default_auto_reply="ok")
    b = ConversableAgent("b", llm_config=False, human_input_mode="NEVER", default_auto_reply="ok")
    response = a.run(b, message="hi", max_turns=2)
    assert response.summary == "ok"  # waits for the end
    assert not _core_events.listening()
    # a chat outside any run makes no report at all
    seen: list[Any] = []

    def look(*args: Any, **kwargs: Any) -> tuple[bool, str]:
        seen.append(_core_events.current_step())
        return True, "done"

    b.register_reply([parley.Agent, None], look)
    a.initiate_chat(b, message="hi", max_turns=1, silent=True)
    assert seen == [None]


def test_the_outcome_waits_for_the_run_without_reading_its_events() -> None:
    a = ConversableAgent("a", llm_config=False, human_input_mode="NEVER", default_auto_reply="x")
    b = ConversableAgent("b", llm_config=False, human_input_mode="NEVER", default_auto_reply="y")
    response = a.run(b, message="hi", max_turns=2, summary_method="last_msg")
    assert response.summary == "y"
    assert [m["content"] for m in response.messages] == ["hi", "y", "x", "y"]
    assert response.last_speaker == "b"
    # the events are still there to read, in full
    assert kinds(response.events)[-1] == "run_completion"
    assert list(response.events) == []  # read once


def test_a_stream_cut_part_way_is_reset_before_its_retry(fake_llm: FakeLLMServer) -> None:
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config(stream=True))
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    fake_llm.add_reply("hello there my friend", drop_after_chunks=2)
    fake_llm.add_reply("hello there my friend")
    events = list(user.run(assistant, message="hi", max_turns=1).events)

    deltas = of(events, "stream")
    assert [d.reset for d in deltas].count(True) == 1
    text = ""
    for delta in deltas:
        text = "" if delta.reset else text + delta.content
    (reply,) = [t for t in of(events, "text") if t.sender == "assistant"]
    assert text == reply.content == "hello there my friend"
    assert {d.message_id for d in deltas} == {reply.message_id}
