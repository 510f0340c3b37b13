"""A durable chat with a tool that requires approval: the human's answers are journaled like
other human input, so a resumed chat replays them (and the calls they allowed) instead of
asking again."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import parley
from parley import AssistantAgent, UserProxyAgent
from parley.agentchat import APPROVE, PendingToolCall, ReviewRequest
from parley.durable import ChatPaused, ChatStore, PausingIO, resume
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

from .._approval_tools import add_delete_file

CHAT_ID = "tidy-up"
WAIT = 20.0  # seconds: the bound of every wait here


def build(fake_llm: FakeLLMServer, deleted: list[str]) -> tuple[UserProxyAgent, AssistantAgent]:
    """The chat's agents, made afresh as a resumed process makes them."""
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    add_delete_file(assistant, user, deleted, idempotent=False)
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


def test_a_pause_waits_for_the_approved_calls_of_its_message(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """The second call's approval pauses the chat while the first, approved, still runs: the
    first finishes and is recorded before ``ChatPaused`` comes out, so the resumed chat does
    not find it unfinished (a non-idempotent call would then need on_uncertain_tool)."""
    fake_llm.add_reply(
        tool_calls=[
            {"name": "pay", "arguments": {"amount": 5}, "id": "call_small"},
            {"name": "pay", "arguments": {"amount": 500}, "id": "call_large"},
        ]
    )
    fake_llm.add_reply("TERMINATE")
    store = ChatStore(tmp_path / "chats.db")
    paid: list[int] = []

    def build_payer() -> tuple[UserProxyAgent, AssistantAgent]:
        assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
        user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
        asked_large = threading.Event()

        def pay(amount: int) -> str:
            if amount <= 20:  # still running when the large payment's question pauses the chat
                asked_large.wait(WAIT)
            paid.append(amount)
            return f"paid {amount}"

        def review(request: ReviewRequest) -> str:
            assert request.tool_call is not None
            if request.tool_call.arguments["amount"] > 20:
                asked_large.set()
                raise ChatPaused(request.prompt)
            return APPROVE

        parley.register_function(
            pay,
            caller=assistant,
            executor=user,
            description="Pay.",
            requires_approval=True,
            idempotent=False,
        )
        user.register_human_review(review)
        return user, assistant

    user, assistant = build_payer()
    with pytest.raises(ChatPaused):
        user.initiate_chat(assistant, message="Pay.", store=store, chat_id=CHAT_ID, silent=True)
    assert paid == [5]  # finished before the pause came out
    [pending] = store.pending_inputs(CHAT_ID)
    assert pending.tool_call == PendingToolCall("pay", {"amount": 500}, "call_large")
    store.answer(CHAT_ID, "")

    user, assistant = build_payer()
    result = resume(CHAT_ID, store=store, sender=user, recipient=assistant)  # no uncertain call
    assert paid == [5, 500]
    assert tool_results(fake_llm.requests[1]) == ["paid 5", "paid 500"]
    assert result.human_input == ["", ""]
