"""The run itself and each chat in it, as events: their start and end, why a chat stopped, the
run's outcome or its failure (``run_completion``, ``termination`` and ``error`` are AG2's; AG2
keeps them in ``autogen.events.agent_events``, which re-exports them here too).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import PrivateAttr

from .base_event import BaseEvent, ContentClass, EventContent, Printer

__all__ = [
    "ChatEndEvent",
    "ChatStartEvent",
    "ErrorEvent",
    "RunCompletionEvent",
    "RunStartEvent",
    "TerminationEvent",
]


def _out(f: Printer | None) -> Printer:
    return f or print


class RunStart(EventContent):
    run_id: str
    agents: list[str]  # the agents the run was started with


class RunStartEvent(BaseEvent):
    """A run began (before its first chat)."""

    type: Literal["run_start"] = "run_start"
    content: RunStart
    content_class: ClassVar[ContentClass] = RunStart


class ChatStart(EventContent):
    parent_chat_id: str | None = None  # the chat this one runs inside (a nested chat)
    sender: str
    recipient: str | None
    message: str | dict[str, Any] | None = None  # the first message (None: made by a callable)
    max_turns: int | None = None

    def print(self, f: Printer | None = None) -> None:
        if self.parent_chat_id is not None:
            out = _out(f)
            out("\n" + "*" * 80, flush=True, sep="")
            out(f"Starting a new chat: {self.sender} -> {self.recipient}", flush=True)
            out("*" * 80, flush=True, sep="")


class ChatStartEvent(BaseEvent):
    """A chat began (the run's own, or a nested or queued one: see ``parent_chat_id``)."""

    type: Literal["chat_start"] = "chat_start"
    content: ChatStart
    content_class: ClassVar[ContentClass] = ChatStart


class ChatEnd(EventContent):
    termination_reason: str | None = None
    summary: Any = None
    cost: dict[str, Any] | None = None  # AutoGen's ChatResult.cost


class ChatEndEvent(BaseEvent):
    """A chat ended, with its summary and cost."""

    type: Literal["chat_end"] = "chat_end"
    content: ChatEnd
    content_class: ClassVar[ContentClass] = ChatEnd


class Termination(EventContent):
    termination_reason: str

    def print(self, f: Printer | None = None) -> None:
        _out(f)(f"\n>>>>>>>> TERMINATING RUN ({self.uuid}): {self.termination_reason}", flush=True)


class TerminationEvent(BaseEvent):
    """Why a chat stopped (``is_termination_msg``, ``max_turns``, ``human_exit``, a budget...)."""

    type: Literal["termination"] = "termination"
    content: Termination
    content_class: ClassVar[ContentClass] = Termination


class RunCompletion(EventContent):
    summary: Any = None
    history: list[dict[str, Any]]
    cost: dict[str, Any] | None = None
    last_speaker: str | None = None
    termination_reason: str | None = None


class RunCompletionEvent(BaseEvent):
    """The run finished: the last event of a run that did not fail."""

    type: Literal["run_completion"] = "run_completion"
    content: RunCompletion
    content_class: ClassVar[ContentClass] = RunCompletion


class Error(EventContent):
    error: str  # the exception's message
    error_type: str  # its class name

    _exception: BaseException | None = PrivateAttr(default=None)

    @property
    def exception(self) -> BaseException | None:
        """The exception itself, in the process that ran the chat (None once parsed)."""
        return self._exception

    def set_exception(self, error: BaseException) -> None:
        """Keep the exception (the run that failed sets it, to raise it to its consumer)."""
        self._exception = error

    def print(self, f: Printer | None = None) -> None:
        _out(f)(f"\n>>>>>>>> ERROR: {self.error_type}: {self.error}", flush=True)


class ErrorEvent(BaseEvent):
    """The run failed: the last event of a run that did not complete. The run's iterator
    raises the exception itself after yielding this."""

    type: Literal["error"] = "error"
    content: Error
    content_class: ClassVar[ContentClass] = Error
