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
import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

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
from ._payloads import jsonable, message_event
from .agent_events import (
    ChatEndEvent,
    ChatStartEvent,
    ExecuteCodeBlockEvent,
    ExecutedCodeBlockEvent,
    ExecutedFunctionEvent,
    ExecuteFunctionEvent,
    GroupChatRunChatEvent,
    TerminationEvent,
)
from .base_event import BaseEvent, event_uuid
from .client_events import StreamEvent, UsageEvent

__all__ = ["RunRecorder", "chat_id_here", "recording"]


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


def _call_fields(step: ToolCallStep) -> dict[str, Any]:
    """What a tool call's start and end events both say."""
    a = step.attrs
    return {
        "func_name": step.name,
        "call_id": a["call_id"],
        "arguments": jsonable(a["arguments"]),
        "recipient": _name(step.agent) or "",
        "approval": a["approval"],
        "chat_id": chat_id_here(step),
    }


class RunRecorder:
    """Turns one run's reports into events, handed to ``put`` in the order they happen.

    Each kind of report it reads has a method here, found by the report's kind in
    :data:`_ON_START`, :data:`_ON_END` and :data:`_ON_EVENT` (one dictionary look-up per report:
    a turn makes a dozen reports, most of which make no event)."""

    def __init__(self, put: Callable[[BaseEvent], None]) -> None:
        self.put = put
        self.total_cost = 0.0
        self._lock = threading.Lock()
        self._replies: dict[str, str] = {}  # agent -> the message id its last reply streamed as
        # Message ids: this run's random prefix and a count (unique, and cheaper than uuids).
        self._prefix = event_uuid().hex[:16]
        self._ids = itertools.count(1)

    def message_id(self) -> str:
        """A new message id, unique to this run."""
        return f"{self._prefix}-{next(self._ids)}"

    # -- steps --------------------------------------------------------------------------------

    def tool_started(self, step: ToolCallStep) -> None:
        self.put(ExecuteFunctionEvent.build(**_call_fields(step)))

    def tool_ended(self, step: ToolCallStep) -> None:
        a = step.attrs
        self.put(
            ExecutedFunctionEvent.build(
                content=jsonable(a.get("result")),
                is_exec_success=bool(a.get("success", False)),
                **_call_fields(step),
            )
        )

    def code_started(self, step: CodeExecutionStep) -> None:
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
                approval=code["approval"],
                chat_id=chat_id_here(step),
            )
        )

    def code_ended(self, step: CodeExecutionStep) -> None:
        code = step.attrs
        self.put(
            ExecutedCodeBlockEvent.build(
                exit_code=code.get("exit_code", 1),
                output=code.get("output", ""),
                recipient=_name(step.agent) or "",
                approval=code["approval"],
                chat_id=chat_id_here(step),
            )
        )

    def chat_started(self, step: ChatStep) -> None:
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

    def chat_ended(self, step: ChatStep) -> None:
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

    def turn_ended(self, step: TurnStep) -> None:
        streamed = step.slots.get(self)
        if streamed is not None and step.attrs.get("reply") is not None:
            self._replies[step.name] = streamed

    def speaker_chosen(self, step: SpeakerSelectionStep) -> None:
        self.put(
            GroupChatRunChatEvent.build(
                speaker=step.attrs.get("speaker", ""),
                manager=step.name,
                last_speaker=step.attrs["last_speaker"],
                chat_id=chat_id_here(step),
            )
        )

    def model_called(self, step: LLMCallStep) -> None:
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

    def received(self, event: ReceivedMessageEvent) -> None:
        data = event.data
        if data["relayed"]:
            return  # a group chat's copy for a member: the original was an event already
        sender = data["sender"] or ""
        message_id = self._replies.pop(sender, None) or self.message_id()
        self.put(
            message_event(
                data["message"], sender, _name(event.source) or "", chat_id_here(), message_id
            )
        )

    def delta(self, event: TokenDeltaEvent) -> None:
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
                message_id = holder.slots[self] = self.message_id()
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


_Handler = Callable[[RunRecorder, Any], None]
_ON_START: dict[str, _Handler] = {
    ToolCallStep.kind: RunRecorder.tool_started,
    CodeExecutionStep.kind: RunRecorder.code_started,
    ChatStep.kind: RunRecorder.chat_started,
}
_ON_END: dict[str, _Handler] = {
    TurnStep.kind: RunRecorder.turn_ended,
    LLMCallStep.kind: RunRecorder.model_called,
    ToolCallStep.kind: RunRecorder.tool_ended,
    CodeExecutionStep.kind: RunRecorder.code_ended,
    SpeakerSelectionStep.kind: RunRecorder.speaker_chosen,
    ChatStep.kind: RunRecorder.chat_ended,
}
_ON_EVENT: dict[str, _Handler] = {
    ReceivedMessageEvent.name: RunRecorder.received,
    TokenDeltaEvent.name: RunRecorder.delta,
}


# -- routing reports to the recorder of the run that made them ------------------------------

_recorder: contextvars.ContextVar[RunRecorder | None] = contextvars.ContextVar(
    "parley_run_recorder", default=None
)


class _Dispatch(_events.Listener):
    """The one listener of all runs: each report goes to its context's recorder, if any."""

    # The kinds a run reads, and those its events' context is found through.
    step_kinds = frozenset(
        {*_ON_START, *_ON_END, LLMCallStep.kind, SpeakerSelectionStep.kind, ChatStep.kind}
    )

    def on_event(self, event: _events.Event) -> None:
        recorder = _recorder.get()
        if recorder is not None:
            handler = _ON_EVENT.get(event.name)
            if handler is not None:
                handler(recorder, event)

    def on_step_start(self, step: _events.Step) -> None:
        recorder = _recorder.get()
        if recorder is not None:
            handler = _ON_START.get(step.kind)
            if handler is not None:
                handler(recorder, step)

    def on_step_end(self, step: _events.Step) -> None:
        recorder = _recorder.get()
        # A step that raised makes no event: the run's error event says what failed.
        if recorder is not None and step.error is None:
            handler = _ON_END.get(step.kind)
            if handler is not None:
                handler(recorder, step)


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
