"""An AG-UI client drives a chat whose tool needs the human's approval, over HTTP on loopback:
the run ends with an interrupt naming the tool call it streamed, and the client's next run on
the thread answers it (approve, reject with feedback, end the chat, cancel); the chat goes on
in that run and finishes. Every event is validated by the ``ag-ui-protocol`` models and each
run checked in the protocol's order (``_client.verify``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import (
    MessagesSnapshotEvent,
    RunFinishedEvent,
    StateSnapshotEvent,
    TextMessageStartEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from parley import AssistantAgent, UserProxyAgent
from parley.ag_ui import APPROVAL_SCHEMA, AGUIServer, AGUIStream
from parley.coding import LocalCommandLineCodeExecutor
from parley.testing import FakeLLMServer

from ._client import Client, Run
from ._support import agents, email_call

Serve = Callable[[AGUIStream], AGUIServer]


def _asked(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client], ran: list[str]
) -> tuple[AGUIStream, Client, Run]:
    """A chat that asks to approve one ``send_email`` call; the first run, interrupted."""
    assistant, user = agents(fake_llm, ran)
    stream = AGUIStream(assistant, user=user)
    ag = client(serve(stream).url)
    fake_llm.add_reply(tool_calls=[email_call()])
    fake_llm.add_reply("Done. TERMINATE")
    first = ag.say("Email my boss.")
    return stream, ag, first


def test_the_client_approves_a_tool_call(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client]
) -> None:
    ran: list[str] = []
    stream, ag, first = _asked(fake_llm, serve, client, ran)

    assert first.types[:2] == ["RUN_STARTED", "STATE_SNAPSHOT"]
    assert first.types[2:5] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
    assert first.types[-3:] == ["STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    (start,) = first.of(ToolCallStartEvent)
    assert (start.tool_call_id, start.tool_call_name) == ("call-1", "send_email")
    assert first.arguments() == {"call-1": {"to": "boss@example.com", "body": "Hello"}}
    (interrupt,) = first.interrupts()
    assert interrupt.reason == "tool_call"
    assert interrupt.tool_call_id == "call-1"
    assert interrupt.response_schema == APPROVAL_SCHEMA
    assert "send_email" in (interrupt.message or "")
    assert interrupt.metadata["parley"]["arguments"] == {"to": "boss@example.com", "body": "Hello"}
    assert first.of(StateSnapshotEvent)[-1].snapshot["parley"]["status"] == "waiting"
    # The snapshot holds the conversation: the client's message, then the call.
    (snapshot,) = first.of(MessagesSnapshotEvent)
    assert [m.role for m in snapshot.messages] == ["user", "assistant"]
    assert snapshot.messages[1].tool_calls[0].id == "call-1"
    assert ran == []  # nothing runs before the approval
    assert stream.waiting() == {ag.thread: [interrupt.id]}
    # The chat waits: the model was asked once.
    assert len(fake_llm.requests) == 1

    second = ag.resume(interrupt.id, {"approved": True})
    assert second.types[:2] == ["RUN_STARTED", "STATE_SNAPSHOT"]
    (result,) = second.of(ToolCallResultEvent)
    assert (result.tool_call_id, result.content) == ("call-1", "sent to boss@example.com")
    # The call's start/args/end are not repeated in the run that answers it.
    assert second.of(ToolCallStartEvent) == []
    assert list(second.texts().values()) == ["Done. TERMINATE"]
    end = second.end
    assert isinstance(end, RunFinishedEvent)
    assert end.outcome is not None
    assert end.outcome.type == "success"
    assert end.result["terminationReason"] == "is_termination_msg"
    assert end.usage is not None
    assert end.usage[0].total_tokens > 0
    assert ran == ["boss@example.com"]
    tool_messages = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["sent to boss@example.com"]
    assert stream.waiting() == {}


def _rejected(fake_llm: FakeLLMServer, **answer: Any) -> list[str]:
    return [m["content"] for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]


def test_the_client_rejects_a_tool_call_with_feedback(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client]
) -> None:
    ran: list[str] = []
    _, ag, first = _asked(fake_llm, serve, client, ran)
    (interrupt,) = first.interrupts()
    second = ag.resume(interrupt.id, {"approved": False, "feedback": "Not to the boss."})
    rejection = "Error: the human rejected the call of send_email: Not to the boss."
    (result,) = second.of(ToolCallResultEvent)
    assert (result.tool_call_id, result.content) == ("call-1", rejection)
    assert second.end.outcome.type == "success"
    assert ran == []
    assert _rejected(fake_llm) == [rejection]


def test_a_cancelled_approval_rejects_the_call_and_the_chat_goes_on(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client]
) -> None:
    ran: list[str] = []
    _, ag, first = _asked(fake_llm, serve, client, ran)
    (interrupt,) = first.interrupts()
    second = ag.resume(interrupt.id, status="cancelled")
    assert ran == []
    assert _rejected(fake_llm) == [
        "Error: the human rejected the call of send_email: the human cancelled the approval"
    ]
    assert list(second.texts().values()) == ["Done. TERMINATE"]


def test_rejecting_with_end_chat_ends_the_chat(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client]
) -> None:
    ran: list[str] = []
    stream, ag, first = _asked(fake_llm, serve, client, ran)
    (interrupt,) = first.interrupts()
    second = ag.resume(interrupt.id, {"approved": False, "endChat": True})
    assert isinstance(second.end, RunFinishedEvent)
    assert second.end.result["terminationReason"] == "human_exit"
    assert ran == []
    assert stream.waiting() == {}


def test_each_call_of_a_message_is_its_own_interrupt(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client]
) -> None:
    ran: list[str] = []
    assistant, user = agents(fake_llm, ran)
    ag = client(serve(AGUIStream(assistant, user=user)).url)
    fake_llm.add_reply(tool_calls=[email_call("a@x", "c-a"), email_call("b@x", "c-b")])
    fake_llm.add_reply("TERMINATE")
    first = ag.say("Email both.")
    assert [s.tool_call_id for s in first.of(ToolCallStartEvent)] == ["c-a", "c-b"]
    (ask_a,) = first.interrupts()
    assert ask_a.tool_call_id == "c-a"
    second = ag.resume(ask_a.id, {"approved": False, "feedback": "not a"})
    (ask_b,) = second.interrupts()
    assert ask_b.tool_call_id == "c-b"
    assert second.of(ToolCallResultEvent) == []  # the calls of one message answer together
    third = ag.resume(ask_b.id, {"approved": True})
    results = {r.tool_call_id: r.content for r in third.of(ToolCallResultEvent)}
    assert results == {
        "c-a": "Error: the human rejected the call of send_email: not a",
        "c-b": "sent to b@x",
    }
    assert ran == ["b@x"]
    assert [e.role for e in third.of(TextMessageStartEvent)] == ["assistant"]


def _code_chat(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client], work: Path
) -> tuple[Client, Run]:
    """A chat whose user proxy asks before running the model's code; the first run."""
    assistant = AssistantAgent("assistant", llm_config=fake_llm.llm_config())
    user = UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config={
            "executor": LocalCommandLineCodeExecutor(work_dir=work),
            "requires_approval": True,
        },
        is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
    )
    ag = client(serve(AGUIStream(assistant, user=user)).url)
    fake_llm.add_reply("```python\nopen('ran.txt', 'w').write('ran')\nprint('wrote')\n```")
    fake_llm.add_reply("Done. TERMINATE")
    return ag, ag.say("Write the file.")


@pytest.mark.parametrize("approved", [True, False])
def test_a_code_approval_is_an_interrupt_carrying_the_blocks(
    fake_llm: FakeLLMServer,
    serve: Serve,
    client: Callable[..., Client],
    tmp_path: Path,
    approved: bool,
) -> None:
    ag, first = _code_chat(fake_llm, serve, client, tmp_path)
    (interrupt,) = first.interrupts()
    assert interrupt.reason == "code_execution"
    assert interrupt.tool_call_id is None
    assert interrupt.response_schema == APPROVAL_SCHEMA
    (block,) = interrupt.metadata["parley"]["code_blocks"]
    assert block["language"] == "python"
    assert "open('ran.txt', 'w')" in block["code"]
    assert "open('ran.txt'" in (interrupt.message or "")
    assert not (tmp_path / "ran.txt").exists()  # nothing runs before the answer
    # a payload that is no approval is refused, as a tool approval's; the chat still waits
    refused = ag.resume(interrupt.id, {"text": "yes"})
    assert refused.types == ["RUN_ERROR"]
    assert refused.end.code == "invalid_payload"

    payload: dict[str, Any] = {"approved": True}
    if not approved:
        payload = {"approved": False, "feedback": "Do not write files."}
    second = ag.resume(interrupt.id, payload)
    assert second.end.outcome.type == "success"
    assert (tmp_path / "ran.txt").exists() is approved
    output = str(fake_llm.requests[1]["messages"][-1]["content"])
    if approved:
        assert "wrote" in output
    else:
        assert "the human rejected the code: Do not write files." in output
