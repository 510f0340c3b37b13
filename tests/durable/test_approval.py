"""A durable chat with a tool that requires approval: the human's answers are journaled like
other human input, so a resumed chat replays them (and the calls they allowed) instead of
asking again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import parley
from parley import AssistantAgent, UserProxyAgent
from parley.durable import ChatPaused, ChatStore, PausingIO, resume
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

CHAT_ID = "tidy-up"


def build(fake_llm: FakeLLMServer, deleted: list[str]) -> tuple[UserProxyAgent, AssistantAgent]:
    """The chat's agents, made afresh as a resumed process makes them."""
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)

    def delete_file(path: str) -> str:
        deleted.append(path)
        return f"deleted {path}"

    parley.register_function(
        delete_file,
        caller=assistant,
        executor=user,
        description="Delete a file.",
        requires_approval=True,
        idempotent=False,
    )
    return user, assistant


def tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_a_resumed_chat_replays_the_approvals(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.add_reply(tool_calls=[{"name": "delete_file", "arguments": {"path": "a.log"}}])
    fake_llm.add_reply(tool_calls=[{"name": "delete_file", "arguments": {"path": "b.tex"}}])
    fake_llm.add_reply("TERMINATE")
    store = ChatStore(tmp_path / "chats.db")
    deleted: list[str] = []

    # The first question pauses the chat: the approval is a pending human input.
    user, assistant = build(fake_llm, deleted)
    with IOStream.set_default(PausingIO()), pytest.raises(ChatPaused):
        user.initiate_chat(assistant, message="Tidy up.", store=store, chat_id=CHAT_ID, silent=True)
    [pending] = store.pending_inputs(CHAT_ID)
    assert pending.agent == "user"
    assert "Approve the call of delete_file" in pending.prompt
    assert '"path": "a.log"' in pending.prompt
    store.answer(CHAT_ID, "")
    assert deleted == []

    # Resumed: the approval is replayed (not asked again), the call runs, and the chat pauses
    # at the next call's question.
    user, assistant = build(fake_llm, deleted)
    with IOStream.set_default(PausingIO()), pytest.raises(ChatPaused):
        resume(CHAT_ID, store=store, sender=user, recipient=assistant)
    assert deleted == ["a.log"]
    [pending] = store.pending_inputs(CHAT_ID)
    assert '"path": "b.tex"' in pending.prompt
    store.answer(CHAT_ID, "Keep the thesis.")

    # Resumed with a human who cannot answer anything: every answer comes from the journal,
    # and the tool that ran is not run again.
    user, assistant = build(fake_llm, deleted)
    with IOStream.set_default(IOScripted([])) as console:
        result = resume(CHAT_ID, store=store, sender=user, recipient=assistant)
    assert console.prompts == []
    assert deleted == ["a.log"]
    assert len(fake_llm.requests) == 3  # each model request made once, across the three runs
    assert tool_results(fake_llm.requests[2])[-1] == (
        "Error: the human rejected the call of delete_file: Keep the thesis."
    )
    assert result.human_input == ["", "Keep the thesis."]
    assert result.termination_reason != "human_exit"


def test_a_replayed_exit_ends_the_resumed_chat_the_same_way(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.add_reply(tool_calls=[{"name": "delete_file", "arguments": {"path": "a.log"}}])
    store = ChatStore(tmp_path / "chats.db")
    deleted: list[str] = []
    user, assistant = build(fake_llm, deleted)
    with IOStream.set_default(PausingIO()), pytest.raises(ChatPaused):
        user.initiate_chat(assistant, message="Tidy up.", store=store, chat_id=CHAT_ID, silent=True)
    store.answer(CHAT_ID, "exit")
    user, assistant = build(fake_llm, deleted)
    with IOStream.set_default(IOScripted([])):
        result = resume(CHAT_ID, store=store, sender=user, recipient=assistant)
    assert result.termination_reason == "human_exit"
    assert deleted == []
    assert len(fake_llm.requests) == 1
