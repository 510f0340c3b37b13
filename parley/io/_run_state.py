"""What a run's chat and its consumer share: the channel of events, the human's pending
questions, and the outcome; and the IOStream the chat uses while it runs.

The chat side (:mod:`parley.agentchat._runs`) emits events and finishes the run; the consumer
side (:mod:`parley.io.run_response`) reads events and waits for the outcome. An agent asking
its human goes through :class:`RunIOStream`: the question becomes an
:class:`~parley.events.InputRequestEvent` and the asking thread (parley asks a stream's
``input`` in a worker thread) waits for ``event.respond(text)``, at most ``input_timeout``
seconds when one is given.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable
from typing import Any

from .._core.reports import current_ask
from ..events import (
    BaseEvent,
    CodeBlockApproval,
    ErrorEvent,
    InputRequestEvent,
    InputResponseEvent,
    RunCompletionEvent,
    ToolApproval,
)
from ..events._channel import EventChannel
from ..events._from_reports import chat_id_here
from ..events._payloads import jsonable
from ..exceptions import InputRequestError, InputTimeoutError, RunNotFinishedError
from .base import IOStream

__all__ = ["FLUSH_DELAY", "RunIOStream", "RunState"]

FLUSH_DELAY = 0.005
"""Seconds an event made on the chat's loop may wait to be handed over with the next ones
(an input request, the end of the run and events from other threads go at once)."""


class _Answer:
    """One input request's answer: given once, by the consumer; waited for by the chat."""

    __slots__ = ("_given", "_lock", "closed", "text")

    def __init__(self) -> None:
        self._given = threading.Event()
        self._lock = threading.Lock()
        self.text: str | None = None
        self.closed = False  # the run ended before an answer came

    def give(self, text: str) -> None:
        with self._lock:
            if self.closed:
                raise InputRequestError("this input request's run has ended: it takes no answer")
            if self.text is not None:
                raise InputRequestError("this input request was answered already")
            self.text = text
        self._given.set()

    def close(self) -> None:
        with self._lock:
            if self.text is None:
                self.closed = True
        self._given.set()

    def wait(self, timeout: float | None) -> bool:
        return self._given.wait(timeout)


class RunState:
    """One run, shared by its chat and its consumer (see the module docstring)."""

    def __init__(self) -> None:
        self.id = uuid.uuid4().hex
        self.channel: EventChannel[BaseEvent] = EventChannel()
        self.result: Any = None  # the ChatResult, once completed
        self.error: BaseException | None = None
        self.completion: RunCompletionEvent | None = None
        self._changed = threading.Condition()
        self._done = False
        self._asking: list[_Answer] = []
        self._cancel: Callable[[], object] | None = None
        self.task: Any = None  # an async run's task, held so that it is not collected
        # Events made on the chat's loop wait up to FLUSH_DELAY and go to the consumer
        # together: waking a reading thread for each event costs the chat several percent of
        # its time (the threads contend for the GIL), a wake-up per few milliseconds does not.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._pending: list[BaseEvent] = []
        self._flushing = False
        self._order = threading.Lock()

    def bind_loop(self) -> None:
        """The chat runs on the running loop (called from it as the run starts)."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()

    def set_canceller(self, cancel: Callable[[], object]) -> None:
        """How :meth:`cancel` stops the chat (cancel its task or future)."""
        self._cancel = cancel

    def cancel(self) -> None:
        """Stop the run's chat (its events then end with an error event)."""
        if self._cancel is not None and not self._done:
            self._cancel()

    def emit(self, event: BaseEvent) -> None:
        """Hand ``event`` to the consumer, after every event made before it."""
        loop = self._loop
        if loop is not None and threading.get_ident() == self._loop_thread:
            with self._order:
                self._pending.append(event)
                if self._flushing:
                    return
                self._flushing = True
            loop.call_later(FLUSH_DELAY, self._flush)
            return
        self._flush(event)

    def _flush(self, *more: BaseEvent) -> None:
        with self._order:  # held while putting: two threads' events keep their order
            pending, self._pending, self._flushing = self._pending, [], False
            for event in (*pending, *more):
                self.channel.put(event)

    # -- the chat's side ------------------------------------------------------------------

    def complete(self, completion: RunCompletionEvent, result: Any) -> None:
        with self._changed:
            self.completion, self.result = completion, result
        self._flush(completion)  # before done: a reader stops once done and drained
        with self._changed:
            self._finish()

    def fail(self, error: BaseException) -> None:
        event = ErrorEvent.build(error=str(error), error_type=type(error).__name__)
        event.content.set_exception(error)
        with self._changed:
            self.error = error
        self._flush(event)
        with self._changed:
            self._finish()

    def _finish(self) -> None:
        self._done = True
        for answer in self._asking:
            answer.close()
        self._changed.notify_all()

    def ask(self, prompt: str, password: bool, timeout: float | None) -> str:
        """Yield an input request and wait for its answer (in the asking thread)."""
        ask = current_ask()
        agent = getattr(ask.agent, "name", None) if ask is not None else None
        sender = getattr(ask.sender, "name", None) if ask is not None else None
        call = ask.tool_call if ask is not None else None
        approval = (
            None
            if call is None
            else ToolApproval(
                name=call.name, arguments=jsonable(call.arguments), call_id=call.call_id
            )
        )
        blocks = ask.code_blocks if ask is not None else None
        code = (
            None
            if blocks is None
            else [CodeBlockApproval(language=b.language, code=b.code) for b in blocks]
        )
        chat_id = chat_id_here()
        event = InputRequestEvent.build(
            prompt=prompt,
            password=password,
            agent=agent,
            sender=sender,
            tool_call=approval,
            code_blocks=code,
            chat_id=chat_id,
        )
        answer = _Answer()
        event.content.set_responder(answer.give)
        with self._changed:
            if self._done:
                raise InputRequestError("the run has ended: nobody can answer its input requests")
            self._asking.append(answer)
            self._changed.notify_all()
        self.emit(event)
        try:
            if not answer.wait(timeout):
                raise InputTimeoutError(prompt, agent, timeout or 0.0)
        finally:
            with self._changed:
                self._asking.remove(answer)
        if answer.text is None:
            raise InputRequestError("the run ended while its input request waited for an answer")
        self.emit(
            InputResponseEvent.build(
                value="" if password else answer.text,
                request=str(event.content.uuid),
                agent=agent,
                chat_id=chat_id,
            )
        )
        return answer.text

    # -- the consumer's side --------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self._done

    def wait(self) -> None:
        """Wait until the run ends; ``RunNotFinishedError`` if it waits for a human's answer
        instead (nobody can give it while this thread waits here)."""
        with self._changed:
            while not self._done:
                if self._asking:
                    raise RunNotFinishedError(
                        "the run waits for an answer to an input request, so its result is not "
                        "there yet: read the run's events and answer each input_request with "
                        "event.respond(text) (response.process() does it at the console)"
                    )
                self._changed.wait()


class RunIOStream(IOStream):
    """A run's stream: what parley would print is dropped (the events say it), what it asks
    becomes an input request event (see :meth:`RunState.ask`)."""

    #: What it prints goes nowhere: callers may skip making the text (parley's turn does).
    discards_output = True

    def __init__(self, state: RunState, input_timeout: float | None) -> None:
        self._state = state
        self._timeout = input_timeout

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        pass

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        return self._state.ask(prompt, password, self._timeout)
