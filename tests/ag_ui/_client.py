"""An AG-UI client for the tests: it POSTs a ``RunAgentInput`` with httpx and reads the
response's server-sent events, each validated by the ``ag-ui-protocol`` package's models, and
the run checked in the order the protocol requires (the rules of the reference client's
``verifyEvents``: one run, started first and finished or failed last; text messages and tool
calls started before their content and ended before the run ends; nothing after the end)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
from ag_ui.core import (
    BaseEvent,
    Event,
    EventType,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    TextMessageContentEvent,
    ToolCallArgsEvent,
)
from pydantic import TypeAdapter

WAIT = 30.0  # seconds: the bound of every request (each takes well under a second)

_EVENT = TypeAdapter(Event)


def sse_data(lines: Iterator[str]) -> Iterator[str]:
    """The ``data`` of each server-sent event (its data lines joined)."""
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                yield "\n".join(data)
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        # comments (":") and other fields are not used by AG-UI
    if data:
        yield "\n".join(data)


class ProtocolError(AssertionError):
    """The stream broke one of AG-UI's ordering rules."""


def verify(events: list[BaseEvent]) -> None:
    """Check one run's events in order (raises :class:`ProtocolError`)."""
    if not events:
        raise ProtocolError("no events")
    first = events[0].type
    if first not in (EventType.RUN_STARTED, EventType.RUN_ERROR):
        raise ProtocolError(f"the first event is {first}, not RUN_STARTED")
    messages: set[str] = set()
    calls: set[str] = set()
    ended_calls: set[str] = set()
    for i, event in enumerate(events):
        kind = event.type
        if i and kind == EventType.RUN_STARTED:
            raise ProtocolError("a second RUN_STARTED in one run")
        if kind in (EventType.RUN_FINISHED, EventType.RUN_ERROR) and i != len(events) - 1:
            raise ProtocolError(f"{kind} at {i} is not the last event: {events[i + 1 :]}")
        message_id = getattr(event, "message_id", None)
        call_id = getattr(event, "tool_call_id", None)
        if kind == EventType.TEXT_MESSAGE_START:
            if message_id in messages:
                raise ProtocolError(f"text message {message_id} started twice")
            messages.add(message_id)
        elif kind in (EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END):
            if message_id not in messages:
                raise ProtocolError(f"{kind} of text message {message_id}, not started")
            if kind == EventType.TEXT_MESSAGE_END:
                messages.discard(message_id)
            elif not event.delta:
                raise ProtocolError(f"empty delta in text message {message_id}")
        elif kind == EventType.TOOL_CALL_START:
            if call_id in calls or call_id in ended_calls:
                raise ProtocolError(f"tool call {call_id} started twice")
            calls.add(call_id)
        elif kind in (EventType.TOOL_CALL_ARGS, EventType.TOOL_CALL_END):
            if call_id not in calls:
                raise ProtocolError(f"{kind} of tool call {call_id}, not started")
            if kind == EventType.TOOL_CALL_END:
                calls.discard(call_id)
                ended_calls.add(call_id)
        elif kind == EventType.TOOL_CALL_RESULT and call_id in calls:
            raise ProtocolError(f"the result of tool call {call_id} before its end")
    last = events[-1]
    if isinstance(last, RunFinishedEvent) and (messages or calls):
        raise ProtocolError(f"the run finished with {messages or calls} still open")
    if not isinstance(last, (RunFinishedEvent, RunErrorEvent)):
        raise ProtocolError(f"the run ended without RUN_FINISHED or RUN_ERROR: {last}")


class Run:
    """One run's events, validated and checked."""

    def __init__(self, events: list[BaseEvent], raw: list[dict[str, Any]]) -> None:
        self.events = events
        self.raw = raw  # the JSON as it came (camelCase)
        verify(events)

    @property
    def types(self) -> list[str]:
        return [e.type.value for e in self.events]

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def end(self) -> BaseEvent:
        return self.events[-1]

    def texts(self) -> dict[str, str]:
        """Each text message's content, its deltas joined, by message id."""
        out: dict[str, str] = {}
        for e in self.of(TextMessageContentEvent):
            out[e.message_id] = out.get(e.message_id, "") + e.delta
        return out

    def arguments(self) -> dict[str, Any]:
        """Each tool call's arguments, its deltas joined and parsed, by call id."""
        out: dict[str, str] = {}
        for e in self.of(ToolCallArgsEvent):
            out[e.tool_call_id] = out.get(e.tool_call_id, "") + e.delta
        return {k: json.loads(v) for k, v in out.items()}

    def interrupts(self) -> list[Any]:
        end = self.end
        assert isinstance(end, RunFinishedEvent), end
        assert end.outcome is not None, end
        assert end.outcome.type == "interrupt", end.outcome
        return list(end.outcome.interrupts)


class Client:
    """An AG-UI client of one endpoint; ``thread`` is the thread its runs are on."""

    def __init__(self, url: str, thread: str | None = None) -> None:
        self.url = url
        self.thread = thread or f"thread-{uuid.uuid4().hex[:8]}"
        self.http = httpx.Client(timeout=WAIT)

    def close(self) -> None:
        self.http.close()

    def body(self, **fields: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "threadId": self.thread,
            "runId": f"run-{uuid.uuid4().hex[:8]}",
            "messages": [],
        }
        body.update(fields)
        RunAgentInput.model_validate(body)  # the client sends only valid input
        return body

    def run(self, **fields: Any) -> Run:
        """POST a run (its fields in camelCase) and read its events to the end."""
        return self.post(self.body(**fields))

    def post(self, body: dict[str, Any]) -> Run:
        events: list[BaseEvent] = []
        raw: list[dict[str, Any]] = []
        headers = {"Accept": "text/event-stream"}
        with self.http.stream("POST", self.url, json=body, headers=headers) as response:
            assert response.status_code == 200, response.read()
            assert response.headers["content-type"].startswith("text/event-stream")
            for data in sse_data(response.iter_lines()):
                raw.append(json.loads(data))
                events.append(_EVENT.validate_json(data))
        return Run(events, raw)

    def say(self, text: str, history: list[dict[str, Any]] | None = None) -> Run:
        """Start a chat with a user message (after ``history``)."""
        message = {"id": f"user-{uuid.uuid4().hex[:8]}", "role": "user", "content": text}
        return self.run(messages=[*(history or []), message])

    def resume(self, interrupt_id: str, payload: Any = None, status: str = "resolved") -> Run:
        entry: dict[str, Any] = {"interruptId": interrupt_id, "status": status}
        if payload is not None:
            entry["payload"] = payload
        return self.run(resume=[entry])
