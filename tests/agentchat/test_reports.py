"""The reports a chat makes for its listeners (``parley._core.reports``): every kind of step and event
carries exactly the attributes its type declares, at its start and at its end; and while nobody
listens, no step is made at all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import parley
from parley import AssistantAgent, ConversableAgent, GroupChat, GroupChatManager, UserProxyAgent
from parley._core import events as _events
from parley._core import reports as _reports
from parley.testing import FakeLLMServer

EVENT_TYPES = {
    "received_message": _reports.ReceivedMessage,
    "agent_created": _reports.AgentCreated,
    "wrapper_created": _reports.WrapperCreated,
    "client_created": _reports.ClientCreated,
    "token_delta": _reports.TokenDelta,
}


class Recorder(_events.Listener):
    """Each step's kind, class and attribute names at its start and at its end; each event's
    name and data keys."""

    def __init__(self) -> None:
        self.starts: list[tuple[str, type, frozenset[str]]] = []
        self.ends: list[tuple[str, type, frozenset[str], BaseException | None]] = []
        self.events: list[tuple[str, frozenset[str]]] = []

    def on_step_start(self, step: _events.Step) -> None:
        self.starts.append((step.kind, type(step), frozenset(step.attrs)))

    def on_step_end(self, step: _events.Step) -> None:
        self.ends.append((step.kind, type(step), frozenset(step.attrs), step.error))

    def on_event(self, event: _events.Event) -> None:
        self.events.append((event.name, frozenset(event.data)))


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    listener = Recorder()
    _events.add_listener(listener)
    try:
        yield listener
    finally:
        _events.remove_listener(listener)


def two_agent_chat(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """A tool call, a code block, then the end: every step a two-agent chat can make (the
    model streams its replies: token deltas too)."""
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config(stream=True))
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
    user.initiate_chat(assistant, message="What is 2+3?", silent=True, summary_method="last_msg")


def group_chat() -> None:
    """Round-robin rounds: the manager's speaker selections."""
    a, b = (
        ConversableAgent(n, llm_config=False, human_input_mode="NEVER", default_auto_reply=n)
        for n in ("a", "b")
    )
    group = GroupChat([a, b], messages=[], max_round=3, speaker_selection_method="round_robin")
    a.initiate_chat(GroupChatManager(group, llm_config=False), message="go", silent=True)


def test_each_step_carries_the_attributes_its_type_declares(
    fake_llm: FakeLLMServer, tmp_path: Path, recorder: Recorder
) -> None:
    two_agent_chat(fake_llm, tmp_path)
    group_chat()
    assert {kind for kind, _, _ in recorder.starts} == set(_reports.STEP_KINDS)
    assert len(recorder.ends) == len(recorder.starts)
    for kind, cls, keys in recorder.starts:
        step_class, attrs = _reports.STEP_KINDS[kind]
        assert cls is step_class
        assert keys == attrs.__required_keys__, kind
    for kind, _, keys, error in recorder.ends:
        _, attrs = _reports.STEP_KINDS[kind]
        assert error is None
        assert keys == attrs.__required_keys__ | attrs.__optional_keys__, kind


def test_each_event_carries_the_data_its_type_declares(
    fake_llm: FakeLLMServer, tmp_path: Path, recorder: Recorder
) -> None:
    two_agent_chat(fake_llm, tmp_path)
    assert {name for name, _ in recorder.events} == set(EVENT_TYPES)
    for name, keys in recorder.events:
        assert keys == EVENT_TYPES[name].__required_keys__, name


def test_a_step_that_raises_ends_with_its_start_attributes_only(
    fake_llm: FakeLLMServer, recorder: Recorder
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("this reply function fails")

    agent = ConversableAgent("agent", llm_config=False, human_input_mode="NEVER")
    agent.register_reply([parley.Agent, None], broken)
    with pytest.raises(RuntimeError, match="this reply function fails"):
        agent.generate_reply([{"role": "user", "content": "hi"}], sender=None)
    ended = {kind: (keys, error) for kind, _, keys, error in recorder.ends}
    for kind in ("reply_func", "turn"):
        keys, error = ended[kind]
        assert isinstance(error, RuntimeError)
        assert keys == _reports.STEP_KINDS[kind][1].__required_keys__


def test_while_nobody_listens_no_step_is_made() -> None:
    assert not _events.listening()
    seen: list[Any] = []

    def look(*args: Any, **kwargs: Any) -> tuple[bool, str]:
        seen.append(_events.current_step())
        return True, "done"

    agent = ConversableAgent("agent", llm_config=False, human_input_mode="NEVER")
    agent.register_reply([parley.Agent, None], look)
    assert agent.generate_reply([{"role": "user", "content": "hi"}], sender=None) == "done"
    assert seen == [None]

    listener = _events.Listener()
    _events.add_listener(listener)
    try:
        agent.generate_reply([{"role": "user", "content": "hi"}], sender=None)
    finally:
        _events.remove_listener(listener)
    step = seen[-1]
    assert isinstance(step, _reports.ReplyFuncStep)
    assert step.name == "look"
    assert isinstance(step.parent, _reports.TurnStep)
