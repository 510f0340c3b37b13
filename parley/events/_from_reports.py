"""A run's events, made from parley's reports (:mod:`parley._core.reports`).

One listener (:class:`_Dispatch`) is registered while at least one run records; it hands each
report to the recorder of the run whose context made it (a context variable set by
:func:`recording`, which the chat's task, its worker threads and its nested chats inherit), so
concurrent runs never see each other's events and chats outside any run are not looked at.
:class:`RunRecorder` turns the reports of its run into :mod:`parley.events` models.

Message ids: the ``stream`` deltas of a reply carry an id kept on the replying agent's
``turn`` step; when that turn ends with a reply, the id waits for the agent's next message
received, which is that reply (replies are delivered after their turn ends), and its event
carries it.
"""

from __future__ import annotations

import contextvars
import json
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel

from .._core import events as _events
from .._core.reports import (
    ChatStep,
    CodeExecutionStep,
    LLMCallStep,
    ReceivedMessageEvent,
    SpeakerSelectionStep,
    TokenDeltaEvent,
    ToolCallStep,
    TurnStep,
)
from .agent_events import (
    ChatEndEvent,
    ChatStartEvent,
    ExecuteCodeBlockEvent,
    ExecutedCodeBlockEvent,
    ExecutedFunctionEvent,
    ExecuteFunctionEvent,
    FunctionCall,
    FunctionCallEvent,
    FunctionResponseEvent,
    GroupChatRunChatEvent,
    TerminationEvent,
    TextEvent,
    ToolCall,
    ToolCallEvent,
    ToolResponse,
    ToolResponseEvent,
)
from .base_event import BaseEvent
from .client_events import StreamEvent, UsageEvent

__all__ = ["RunRecorder", "chat_id_here", "jsonable", "recording"]


def jsonable(value: Any) -> Any:
    """``value`` with everything JSON cannot hold made into what it can (models dumped,
    tuples made lists, keys made text, other objects their ``str``)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return str(value)


def _name(agent: Any) -> str | None:
    name = getattr(agent, "name", None)
    return name if name is None or isinstance(name, str) else str(name)


def chat_id_here(step: _events.Step | None = None) -> str | None:
    """The id of the chat running where ``step`` (else the current step) runs."""
    step = step if step is not None else _events.current_step()
    while step is not None:
        if isinstance(step, ChatStep):
            return step.attrs["chat_id"]
        step = step.parent
    return None


def _text(content: Any) -> Any:
    """A message's content for an event: text, a list of parts, or None."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return [jsonable(p) if isinstance(p, Mapping) else {"text": str(p)} for p in content]
    return str(content)


def _arguments(arguments: Any) -> str | None:
    if arguments is None or isinstance(arguments, str):
        return arguments
    return json.dumps(jsonable(arguments))


def _function(call: Mapping[str, Any]) -> FunctionCall:
    return FunctionCall.model_construct(
        name=call.get("name"), arguments=_arguments(call.get("arguments"))
    )


def message_event(
    message: Any, sender: str, recipient: str, chat_id: str | None, message_id: str | None
) -> BaseEvent:
    """The event of ``message`` received by ``recipient`` from ``sender`` (AG2's choice of
    kind: a function or tool result, a function or tool call, else text)."""
    common = {
        "sender": sender,
        "recipient": recipient,
        "chat_id": chat_id,
        "message_id": message_id,
    }
    if not isinstance(message, Mapping):
        return TextEvent.build(content=_text(message), **common)  # type: ignore[no-any-return]
    role = message.get("role")
    content = _text(message.get("content"))
    if role == "function":
        return FunctionResponseEvent.build(name=message.get("name"), content=content, **common)  # type: ignore[no-any-return]
    if role == "tool":
        responses = message.get("tool_responses") or [message]
        return ToolResponseEvent.build(  # type: ignore[no-any-return]
            content=content,
            tool_responses=[
                ToolResponse.model_construct(
                    tool_call_id=r.get("tool_call_id"), role="tool", content=_text(r.get("content"))
                )
                for r in responses
            ],
            **common,
        )
    if message.get("tool_calls"):
        calls = [
            ToolCall.model_construct(
                id=c.get("id"),
                type=str(c.get("type") or "function"),
                function=_function(c.get("function") or {}),
            )
            for c in message["tool_calls"]
        ]
        return ToolCallEvent.build(  # type: ignore[no-any-return]
            content=content, tool_calls=calls, **common
        )
    if message.get("function_call"):
        return FunctionCallEvent.build(  # type: ignore[no-any-return]
            content=content,
            function_call=_function(message["function_call"]),
            **common,
        )
    return TextEvent.build(content=content, **common)  # type: ignore[no-any-return]


class RunRecorder(_events.Listener):
    """Turns one run's reports into events, handed to ``put`` in the order they happen."""

    def __init__(self, put: Callable[[BaseEvent], None]) -> None:
        self.put = put
        self.total_cost = 0.0
        self._lock = threading.Lock()
        self._replies: dict[str, str] = {}  # agent -> the message id its last reply streamed as

    # -- steps --------------------------------------------------------------------------------

    def on_step_start(self, step: _events.Step) -> None:
        if isinstance(step, ToolCallStep):
            a = step.attrs
            self.put(
                ExecuteFunctionEvent.build(
                    func_name=step.name,
                    call_id=a["call_id"],
                    arguments=jsonable(a["arguments"]),
                    recipient=_name(step.agent) or "",
                    approval=a["approval"],
                    chat_id=chat_id_here(step),
                )
            )
        elif isinstance(step, CodeExecutionStep):
            code = step.attrs
            languages = list(code["languages"])
            self.put(
                ExecuteCodeBlockEvent.build(
                    code=code["code"],
                    language=languages[0] if languages else "",
                    languages=languages,
                    code_block_count=len(languages),
                    recipient=_name(step.agent) or "",
                    executor=code["executor"],
                    chat_id=chat_id_here(step),
                )
            )
        elif isinstance(step, ChatStep):
            chat = step.attrs
            message = chat["message"]
            self.put(
                ChatStartEvent.build(
                    chat_id=chat["chat_id"],
                    parent_chat_id=chat["parent_chat_id"],
                    sender=chat["sender"],
                    recipient=chat["recipient"],
                    message=message
                    if message is None or isinstance(message, str)
                    else jsonable(message),
                    max_turns=chat["max_turns"],
                )
            )

    def on_step_end(self, step: _events.Step) -> None:
        if step.error is not None:
            return  # the run's error event says what failed
        if isinstance(step, TurnStep):
            streamed = step.slots.get(self)
            if streamed is not None and step.attrs.get("reply") is not None:
                self._replies[step.name] = streamed
        elif isinstance(step, LLMCallStep):
            self._usage(step)
        elif isinstance(step, ToolCallStep):
            a = step.attrs
            self.put(
                ExecutedFunctionEvent.build(
                    func_name=step.name,
                    call_id=a["call_id"],
                    arguments=jsonable(a["arguments"]),
                    recipient=_name(step.agent) or "",
                    approval=a["approval"],
                    content=jsonable(a.get("result")),
                    is_exec_success=bool(a.get("success", False)),
                    chat_id=chat_id_here(step),
                )
            )
        elif isinstance(step, CodeExecutionStep):
            code = step.attrs
            self.put(
                ExecutedCodeBlockEvent.build(
                    exit_code=code.get("exit_code", 1),
                    output=code.get("output", ""),
                    recipient=_name(step.agent) or "",
                    chat_id=chat_id_here(step),
                )
            )
        elif isinstance(step, SpeakerSelectionStep):
            self.put(
                GroupChatRunChatEvent.build(
                    speaker=step.attrs.get("speaker", ""),
                    manager=step.name,
                    last_speaker=step.attrs["last_speaker"],
                    chat_id=chat_id_here(step),
                )
            )
        elif isinstance(step, ChatStep):
            chat = step.attrs
            reason = chat.get("termination_reason")
            if reason:
                self.put(TerminationEvent.build(termination_reason=reason, chat_id=chat["chat_id"]))
            self.put(
                ChatEndEvent.build(
                    termination_reason=reason,
                    summary=jsonable(chat.get("summary")),
                    cost=jsonable(chat.get("cost")),
                    chat_id=chat["chat_id"],
                )
            )

    def _usage(self, step: LLMCallStep) -> None:
        a = step.attrs
        usage = a.get("usage") or {}
        cost = float(a.get("cost") or 0.0)
        with self._lock:
            self.total_cost += cost
            total = self.total_cost
        self.put(
            UsageEvent.build(
                agent=a["charged_to"] or _name(step.agent),
                model=str(usage.get("model") or a.get("response_model") or a["model"]),
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
                total_tokens=int(usage.get("total_tokens") or 0),
                cost=cost,
                cached=bool(a.get("cached")),
                total_cost=total,
                chat_id=chat_id_here(step),
            )
        )

    # -- events -------------------------------------------------------------------------------

    def on_event(self, event: _events.Event) -> None:
        if isinstance(event, ReceivedMessageEvent):
            data = event.data
            if data["relayed"]:
                return  # a group chat's copy for a member: the original was an event already
            sender = data["sender"] or ""
            message_id = self._replies.pop(sender, None) or uuid.uuid4().hex
            self.put(
                message_event(
                    data["message"], sender, _name(event.source) or "", chat_id_here(), message_id
                )
            )
        elif isinstance(event, TokenDeltaEvent):
            self._delta(event)

    def _delta(self, event: TokenDeltaEvent) -> None:
        call: LLMCallStep | None = None
        step = _events.current_step()
        holder: _events.Step | None = None
        while step is not None:
            if isinstance(step, LLMCallStep) and call is None:
                call = step
            elif isinstance(step, SpeakerSelectionStep):
                return  # a manager choosing a speaker: no message of the chat
            elif isinstance(step, (TurnStep, ChatStep)):
                holder = step if isinstance(step, TurnStep) else call
                break
            step = step.parent
        holder = holder or call
        if holder is None:
            message_id = None
        else:
            message_id = holder.slots.get(self)
            if message_id is None:
                message_id = holder.slots[self] = uuid.uuid4().hex
        agent = call.attrs["charged_to"] if call is not None else None
        self.put(
            StreamEvent.build(
                content=event.data["text"],
                agent=agent,
                message_id=message_id,
                reset=event.data["reset"],
                chat_id=chat_id_here(),
            )
        )


# -- routing reports to the recorder of the run that made them ------------------------------

_recorder: contextvars.ContextVar[RunRecorder | None] = contextvars.ContextVar(
    "parley_run_recorder", default=None
)


class _Dispatch(_events.Listener):
    """The one listener of all runs: each report goes to its context's recorder, if any."""

    def on_event(self, event: _events.Event) -> None:
        recorder = _recorder.get()
        if recorder is not None:
            recorder.on_event(event)

    def on_step_start(self, step: _events.Step) -> None:
        recorder = _recorder.get()
        if recorder is not None:
            recorder.on_step_start(step)

    def on_step_end(self, step: _events.Step) -> None:
        recorder = _recorder.get()
        if recorder is not None:
            recorder.on_step_end(step)


_dispatch = _Dispatch()
_lock = threading.Lock()
_recording = 0


@contextmanager
def recording(recorder: RunRecorder) -> Iterator[None]:
    """Within the block (and what it starts: tasks, worker threads, nested chats), reports go
    to ``recorder``."""
    global _recording
    with _lock:
        _recording += 1
        if _recording == 1:
            _events.add_listener(_dispatch)
    token = _recorder.set(recorder)
    try:
        yield
    finally:
        _recorder.reset(token)
        with _lock:
            _recording -= 1
            if _recording == 0:
                _events.remove_listener(_dispatch)
