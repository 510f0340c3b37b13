"""Runs over HTTP on loopback beyond approvals: a chat asking its human for input, streamed
replies, the conversation before the last message, concurrent threads, the requests the
endpoint refuses (each a ``RUN_ERROR`` with a code), a waiting chat given up after its timeout,
and a failing model."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from ag_ui.core import (
    RunErrorEvent,
    RunFinishedEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallResultEvent,
)

from parley.ag_ui import INPUT_SCHEMA, AGUIServer, AGUIStream
from parley.testing import FakeLLMServer

from ._client import Client
from ._support import agents, email_call, wait_until

Serve = Callable[[AGUIStream], AGUIServer]


def _refused(run: object, code: str) -> RunErrorEvent:
    end = run.end
    assert run.types == ["RUN_ERROR"], run.types
    assert isinstance(end, RunErrorEvent)
    assert end.code == code, end
    return end


def test_a_chat_asks_its_human_through_the_client(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client]
) -> None:
    assistant, user = agents(fake_llm, [], human_input_mode="ALWAYS")
    stream = AGUIStream(assistant, user=user)
    ag = client(serve(stream).url)
    fake_llm.add_reply("Which city?")
    fake_llm.add_reply("Paris is sunny.")
    first = ag.say("Weather?")
    assert list(first.texts().values()) == ["Which city?"]
    (ask,) = first.interrupts()
    assert ask.reason == "input_required"
    assert ask.response_schema == INPUT_SCHEMA
    assert ask.metadata["parley"]["agent"] == "user"

    second = ag.resume(ask.id, {"text": "Paris"})
    starts = second.of(TextMessageStartEvent)
    assert [(s.role, s.name) for s in starts] == [("user", "user"), ("assistant", "assistant")]
    assert list(second.texts().values()) == ["Paris", "Paris is sunny."]
    last = fake_llm.requests[1]["messages"][-1]
    assert (last["role"], last["content"]) == ("user", "Paris")
    (again,) = second.interrupts()

    third = ag.resume(again.id, status="cancelled")  # nobody answers: the chat ends
    assert isinstance(third.end, RunFinishedEvent)
    assert third.end.result["terminationReason"] == "human_exit"
    assert stream.waiting() == {}


def test_a_streamed_reply_arrives_as_deltas_of_one_message(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client]
) -> None:
    assistant, user = agents(fake_llm, [], stream=True)
    ag = client(serve(AGUIStream(assistant, user=user, max_turns=1)).url)
    fake_llm.add_reply("The answer is forty-two, as computed.")
    run = ag.say("Compute.")
    contents = [e for e in run.raw if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert len(contents) > 1  # streamed in pieces
    (message_id,) = {e["messageId"] for e in contents}
    assert run.texts() == {message_id: "The answer is forty-two, as computed."}
    (end,) = run.of(TextMessageEndEvent)
    assert end.message_id == message_id
    assert run.end.outcome.type == "success"


def test_the_conversation_before_reaches_the_chat_as_carryover(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client]
) -> None:
    assistant, user = agents(fake_llm, [])
    ag = client(serve(AGUIStream(assistant, user=user, max_turns=1)).url)
    fake_llm.add_reply("It was 42.")
    history = [
        {"id": "u1", "role": "user", "content": "Remember 42."},
        {"id": "a1", "role": "assistant", "content": "Noted."},
    ]
    ag.say("What was it?", history)
    sent = fake_llm.requests[0]["messages"][-1]["content"]
    assert sent.startswith("What was it?")
    assert "user: Remember 42." in sent
    assert "assistant: Noted." in sent


def test_threads_of_a_factory_run_side_by_side(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client]
) -> None:
    ran: list[str] = []
    stream = AGUIStream(lambda: agents(fake_llm, ran))
    url = serve(stream).url
    one, two = client(url, "one"), client(url, "two")
    fake_llm.add_reply(tool_calls=[email_call("one@x", "c1")])
    ask_one = one.say("Email one.").interrupts()[0]
    fake_llm.add_reply(tool_calls=[email_call("two@x", "c2")])
    ask_two = two.say("Email two.").interrupts()[0]
    assert stream.waiting() == {"one": [ask_one.id], "two": [ask_two.id]}
    fake_llm.add_reply("TERMINATE")
    two_done = two.resume(ask_two.id, {"approved": True})
    fake_llm.add_reply("TERMINATE")
    one_done = one.resume(ask_one.id, {"approved": True})
    assert [r.tool_call_id for r in two_done.of(ToolCallResultEvent)] == ["c2"]
    assert [r.tool_call_id for r in one_done.of(ToolCallResultEvent)] == ["c1"]
    assert ran == ["two@x", "one@x"]


def test_requests_that_cannot_be_served_are_refused(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client]
) -> None:
    ran: list[str] = []
    assistant, user = agents(fake_llm, ran)
    server = serve(AGUIStream(assistant, user=user))
    ag = client(server.url)
    _refused(ag.run(messages=[]), "no_user_message")
    _refused(ag.resume("nothing"), "unknown_interrupt")
    fake_llm.add_reply(tool_calls=[email_call()])
    (ask,) = ag.say("Email.").interrupts()

    _refused(ag.say("Something else."), "interrupt_pending")
    _refused(ag.resume("another"), "unknown_interrupt")
    bad = _refused(ag.resume(ask.id, {"approved": "yes"}), "invalid_payload")
    assert "approved" in bad.message
    # The agents are objects: another thread waits until this one's chat ends.
    _refused(client(server.url, "other").say("Hi"), "busy")

    fake_llm.add_reply("TERMINATE")
    done = ag.resume(ask.id, {"approved": True})  # the refusals left the chat waiting
    assert done.end.outcome.type == "success"
    assert ran == ["boss@example.com"]

    response = httpx.post(server.url, json={"threadId": "t"}, timeout=20)
    assert response.status_code == 422
    assert "RunAgentInput" in response.json()["error"]


def test_a_waiting_chat_is_given_up_after_the_timeout(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client]
) -> None:
    ran: list[str] = []
    assistant, user = agents(fake_llm, ran)
    stream = AGUIStream(assistant, user=user, interrupt_timeout=0.2)
    ag = client(serve(stream).url)
    fake_llm.add_reply(tool_calls=[email_call()])
    (ask,) = ag.say("Email.").interrupts()
    assert ask.expires_at is not None
    assert ask.expires_at.endswith("Z")
    wait_until(lambda: not stream.waiting() and not stream.threads())
    _refused(ag.resume(ask.id, {"approved": True}), "unknown_interrupt")
    assert ran == []
    # Given up, the chat was told "exit": the call was rejected and the chat ended.
    assert len(fake_llm.requests) == 1
    fake_llm.add_reply("Hello again. TERMINATE")  # the agents are free for a new chat
    assert ag.say("Hi").end.outcome.type == "success"


def test_a_failing_model_fails_the_run(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client]
) -> None:
    assistant, user = agents(fake_llm, [])
    stream = AGUIStream(assistant, user=user)
    ag = client(serve(stream).url)
    fake_llm.add_error(400, "the prompt is not allowed")
    run = ag.say("Hi")
    assert run.types[0] == "RUN_STARTED"
    end = run.end
    assert isinstance(end, RunErrorEvent)
    assert "the prompt is not allowed" in end.message
    assert end.code
    wait_until(lambda: not stream.threads())


def test_a_client_that_goes_away_stops_the_chat(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client]
) -> None:
    assistant, user = agents(fake_llm, [], stream=True)
    stream = AGUIStream(assistant, user=user)
    ag = client(serve(stream).url)
    fake_llm.add_reply(" ".join(f"word{i}" for i in range(200)), chunk_delay=0.05)
    body = ag.body(messages=[{"id": "u", "role": "user", "content": "Talk."}])
    with ag.http.stream("POST", ag.url, json=body) as response:
        for line in response.iter_lines():
            if "TEXT_MESSAGE_CONTENT" in line:
                break  # the reply is streaming: leave
    # The chat is cancelled: its streaming model request is cut (a request that completed
    # would leave its connection open, idle in the client's pool), and the thread is free.
    wait_until(lambda: fake_llm.open_connections == 0)
    wait_until(lambda: not stream.threads())
    assert len(fake_llm.received) == 1
    fake_llm.add_reply("Back. TERMINATE")
    assert ag.say("Again?").end.outcome.type == "success"


def test_an_agent_alone_talks_with_a_user_proxy_of_its_run(
    fake_llm: FakeLLMServer, serve: Serve, client: Callable[..., Client]
) -> None:
    assistant, _ = agents(fake_llm, [])
    ag = client(serve(AGUIStream(assistant, max_turns=1)).url)
    fake_llm.add_reply("Hello from the assistant.")
    run = ag.say("Hi")
    (start,) = run.of(TextMessageStartEvent)
    assert (start.role, start.name) == ("assistant", "assistant")
    assert list(run.texts().values()) == ["Hello from the assistant."]
    assert run.end.outcome.type == "success"
