"""parley's events as AG-UI events, one by one.

=============================  ==========================================================
parley event                   AG-UI events
=============================  ==========================================================
``stream`` (a token delta)     ``TEXT_MESSAGE_START`` (at the first), ``TEXT_MESSAGE_CONTENT``
``text``                       ``TEXT_MESSAGE_END`` after its deltas; unstreamed:
                               ``TEXT_MESSAGE_START`` / ``CONTENT`` / ``END``
``tool_call``                  its text as above, then per call ``TOOL_CALL_START`` (parent:
                               the message) / ``TOOL_CALL_ARGS`` / ``TOOL_CALL_END``
``function_call``              the same, under an id made for the call
``tool_response``              ``TOOL_CALL_RESULT`` per result
``function_response``          ``TOOL_CALL_RESULT`` for the function call it answers
``usage``                      summed per model into ``RUN_FINISHED.usage``
``group_chat_run_chat``,       the ``parley`` key of ``STATE_SNAPSHOT`` (last speaker,
``chat_end``,                  termination reason, summary, cost)
``run_completion``
``input_request``              ``RUN_FINISHED`` with an interrupt (``_threads``)
``error``                      ``RUN_ERROR``
=============================  ==========================================================

A text message's role is ``user`` when its sender is the agent that stands for the client's
human (the chat's sender), ``assistant`` otherwise; ``name`` is the sending agent's. The chat's
opening message is not repeated: the client sent it. The :class:`Translator` belongs to one
thread and lives across its runs, so a resumed run goes on with the same message ids, and
:attr:`Translator.messages` is the conversation for ``MESSAGES_SNAPSHOT``.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict, deque
from collections.abc import Iterator
from typing import Any, Literal

from ag_ui.core import (
    AssistantMessage,
    BaseEvent,
    Message,
    RunErrorEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolMessage,
    UserMessage,
)
from ag_ui.core import FunctionCall as AGUIFunctionCall
from ag_ui.core import ToolCall as AGUIToolCall

from .. import events as parley_events
from ._input import text_of

__all__ = ["Translator"]


def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


class Translator:
    """Turns one thread's parley events into AG-UI events (see the module's table)."""

    def __init__(self, user: str | None, messages: list[Message]) -> None:
        self._user = user
        self.messages: list[Message] = list(messages)
        """The conversation: the client's messages, then the chat's as they happen."""
        self._opening_seen = False
        self._top_chat: str | None = None
        self._streaming: dict[str, str] = {}  # parley message id -> open AG-UI text message id
        self._restarts: dict[str, int] = defaultdict(int)
        self._seen: set[str] = set()  # parley message ids already translated
        self._function_calls: dict[str, deque[str]] = defaultdict(deque)  # name -> call ids
        self._usage: dict[str, dict[str, int]] = {}
        self.state: dict[str, Any] = {"status": "running", "lastSpeaker": None}
        """The ``parley`` key of the thread's state snapshots."""

    # -- what a run reports at its end --------------------------------------------------

    def take_usage(self) -> list[TokenUsage] | None:
        """The tokens of the model calls since the last call, one entry per model."""
        usage = [
            TokenUsage(
                model=model,
                input_tokens=n["prompt"],
                output_tokens=n["completion"],
                total_tokens=n["total"],
            )
            for model, n in self._usage.items()
        ]
        self._usage = {}
        return usage or None

    def close_open(self) -> Iterator[BaseEvent]:
        """End the text messages still streaming (before a run finishes)."""
        for ag_id in self._streaming.values():
            yield TextMessageEndEvent(message_id=ag_id)
        self._streaming.clear()

    def tool_call_id(self, name: str, call_id: str | None) -> str | None:
        """The AG-UI id of a call: its own, or the one made for a legacy function call."""
        if call_id is not None:
            return call_id
        pending = self._function_calls.get(name)
        return pending[0] if pending else None

    # -- one event ----------------------------------------------------------------------

    def translate(self, event: parley_events.BaseEvent) -> Iterator[BaseEvent]:
        """The AG-UI events that ``event`` becomes (none for most kinds)."""
        if isinstance(event, parley_events.StreamEvent):
            yield from self._delta(event.content)
        elif isinstance(event, parley_events.TextEvent):
            yield from self._message(event.content, event.content.content, ())
        elif isinstance(event, parley_events.ToolCallEvent):
            calls = [
                (c.id, c.function.name, c.function.arguments) for c in event.content.tool_calls
            ]
            yield from self._message(event.content, event.content.content, calls)
        elif isinstance(event, parley_events.FunctionCallEvent):
            call = event.content.function_call
            call_id = _new_id("call")
            self._function_calls[call.name or ""].append(call_id)
            calls = [(call_id, call.name, call.arguments)]
            yield from self._message(event.content, event.content.content, calls)
        elif isinstance(event, parley_events.ToolResponseEvent):
            for response in event.content.tool_responses:
                if response.tool_call_id is not None:
                    yield self._result(response.tool_call_id, response.content)
        elif isinstance(event, parley_events.FunctionResponseEvent):
            pending = self._function_calls.get(event.content.name or "")
            if pending:
                yield self._result(pending.popleft(), event.content.content)
        elif isinstance(event, parley_events.UsageEvent):
            self._count(event.content)
        elif isinstance(event, parley_events.ChatStartEvent):
            if self._top_chat is None:
                self._top_chat = event.content.chat_id
        elif isinstance(event, parley_events.GroupChatRunChatEvent):
            self.state["lastSpeaker"] = event.content.speaker
        elif isinstance(event, parley_events.ChatEndEvent):
            if event.content.chat_id == self._top_chat:
                self.state["terminationReason"] = event.content.termination_reason
        elif isinstance(event, parley_events.RunCompletionEvent):
            done = event.content
            self.state.update(
                status="finished",
                lastSpeaker=done.last_speaker,
                terminationReason=done.termination_reason,
                summary=_jsonable(done.summary),
            )
        elif isinstance(event, parley_events.ErrorEvent):
            yield from self.close_open()
            yield RunErrorEvent(
                message=f"{event.content.error_type}: {event.content.error}",
                code=event.content.error_type,
            )

    # -- messages -------------------------------------------------------------------------

    def _delta(self, piece: Any) -> Iterator[BaseEvent]:
        key = piece.message_id or f"stream:{piece.agent}"
        if piece.reset and key in self._streaming:
            # The stream failed part-way and starts again: what was shown is ended as it stands
            # and the retry streams as a message of its own (the snapshot holds the final text).
            yield TextMessageEndEvent(message_id=self._streaming.pop(key))
            self._restarts[key] += 1
        if not piece.content:
            return
        ag_id = self._streaming.get(key)
        if ag_id is None:
            ag_id = key if not self._restarts[key] else f"{key}:{self._restarts[key]}"
            self._streaming[key] = ag_id
            yield TextMessageStartEvent(message_id=ag_id, role="assistant", name=piece.agent)
        yield TextMessageContentEvent(message_id=ag_id, delta=piece.content)

    def _message(self, head: Any, content: Any, calls: Any) -> Iterator[BaseEvent]:
        if head.message_id is not None:
            if head.message_id in self._seen:  # relayed again (a group chat's broadcast)
                return
            self._seen.add(head.message_id)
        if not self._opening_seen and head.chat_id == self._top_chat:
            self._opening_seen = True  # the client's own message, which it has already
            return
        self.state["lastSpeaker"] = head.sender
        text = text_of(content)
        ag_id = head.message_id or _new_id("msg")
        streamed = self._streaming.pop(head.message_id or f"stream:{head.sender}", None)
        role: Literal["user", "assistant"] = (
            "user" if head.sender == self._user and not calls else "assistant"
        )
        if streamed is not None:
            yield TextMessageEndEvent(message_id=streamed)
            ag_id = streamed
        elif text:
            yield TextMessageStartEvent(message_id=ag_id, role=role, name=head.sender)
            yield TextMessageContentEvent(message_id=ag_id, delta=text)
            yield TextMessageEndEvent(message_id=ag_id)
        tool_calls = []
        for call_id, name, arguments in calls:
            call_id = call_id or _new_id("call")
            yield ToolCallStartEvent(
                tool_call_id=call_id, tool_call_name=name or "", parent_message_id=ag_id
            )
            if arguments:
                yield ToolCallArgsEvent(tool_call_id=call_id, delta=arguments)
            yield ToolCallEndEvent(tool_call_id=call_id)
            tool_calls.append(
                AGUIToolCall(
                    id=call_id,
                    function=AGUIFunctionCall(name=name or "", arguments=arguments or "{}"),
                )
            )
        if role == "user" and text:
            self.messages.append(UserMessage(id=ag_id, content=text, name=head.sender))
        elif role == "assistant" and (text or tool_calls):
            self.messages.append(
                AssistantMessage(
                    id=ag_id, content=text or None, name=head.sender, tool_calls=tool_calls or None
                )
            )

    def _result(self, call_id: str, content: Any) -> ToolCallResultEvent:
        message_id = _new_id("result")
        text = text_of(content)
        self.messages.append(ToolMessage(id=message_id, tool_call_id=call_id, content=text))
        return ToolCallResultEvent(
            message_id=message_id, tool_call_id=call_id, content=text, role="tool"
        )

    def _count(self, usage: Any) -> None:
        if usage.cached:
            return
        n = self._usage.setdefault(usage.model, {"prompt": 0, "completion": 0, "total": 0})
        n["prompt"] += usage.prompt_tokens
        n["completion"] += usage.completion_tokens
        n["total"] += usage.total_tokens
        self.state["cost"] = usage.total_cost


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value
