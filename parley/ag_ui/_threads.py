"""One AG-UI thread's live chat: its parley events read run after run, and the question it
waits on between runs.

A request that starts a chat reads its events, translated, until the chat ends (the run
finishes with success) or asks its human (the run finishes with an interrupt and the chat stays
here, waiting). The thread's next request answers the interrupt from its ``resume`` entry and
reads on from where the last one stopped, under its own run id. A waiting chat is given up
after ``interrupt_timeout`` seconds (its question answered ``exit``), and so is one whose client
went away while it ran: that one is cancelled. Either is then read to its end (any further
question answered ``exit``), so that it ends without anyone watching.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from ag_ui.core import (
    BaseEvent,
    Interrupt,
    MessagesSnapshotEvent,
    ResumeEntry,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    StateSnapshotEvent,
)

from .. import events as parley_events
from ._input import Refusal
from ._interrupts import answer_text, interrupt_for
from ._translate import Translator

__all__ = ["ChatThread"]

logger = logging.getLogger(__name__)

_EXIT = "exit"


class ChatThread:
    """The chat of thread ``thread_id``: ``events`` its parley events (read once, across
    runs), ``cancel`` what stops it; ``state`` the client's state, which snapshots keep."""

    def __init__(
        self,
        thread_id: str,
        events: AsyncIterator[parley_events.BaseEvent],
        cancel: Callable[[], object] | None,
        translator: Translator,
        state: Any,
        interrupt_timeout: float | None,
        on_end: Callable[[ChatThread], None],
    ) -> None:
        self.thread_id = thread_id
        self._events = events
        self._cancel = cancel
        self._translator = translator
        self._client_state = state
        self._timeout = interrupt_timeout
        self._on_end = on_end
        self.pending: InputRequest | None = None
        self.attached = False  # a request is reading the events now
        self.ended = False
        self._expiry: asyncio.TimerHandle | None = None
        self._drain: asyncio.Task[None] | None = None

    # -- a run --------------------------------------------------------------------------

    def resume(self, entries: list[ResumeEntry] | None) -> Refusal | str:
        """The answer ``entries`` give the question the chat waits on, or why they cannot."""
        pending = self.pending
        if pending is None:
            return Refusal("not_waiting", f"thread {self.thread_id} is not waiting for an answer")
        if not entries:
            return Refusal(
                "interrupt_pending",
                f"thread {self.thread_id} waits for an answer to interrupt "
                f"{pending.interrupt.id}: send it in resume",
            )
        ids = [e.interrupt_id for e in entries]
        if ids != [pending.interrupt.id]:
            return Refusal(
                "unknown_interrupt",
                f"resume answers {ids}, but thread {self.thread_id} waits on exactly "
                f"[{pending.interrupt.id!r}]",
            )
        if pending.expired():
            return Refusal("interrupt_expired", f"interrupt {pending.interrupt.id} has expired")
        return answer_text(pending.request, entries[0])

    async def run(self, answer: str | None) -> AsyncIterator[BaseEvent]:
        """This run's events: the chat read (after ``answer`` is given to the question it
        waits on) until it ends or asks again. Left before that (the client went away), the
        chat is given up."""
        self.attached = True
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        if answer is not None and self.pending is not None:
            request, self.pending = self.pending.request, None
            await request.a_respond(answer)
        self._translator.state["status"] = "running"
        done = False
        try:
            yield self._state()
            async for event in self._read():
                yield event
            done = True
        finally:
            self.attached = False
            if not done:
                self.give_up()

    async def _read(self) -> AsyncIterator[BaseEvent]:
        translator = self._translator
        while True:
            try:
                event = await anext(self._events)
            except StopAsyncIteration:
                break
            except Exception as error:  # the run's iterator raises what failed it
                yield from_error(error)
                self._end()
                return
            if isinstance(event, parley_events.InputRequestEvent):
                for out in translator.close_open():
                    yield out
                self.pending = InputRequest(event, translator, self._timeout)
                translator.state["status"] = "waiting"
                yield self._state()
                yield MessagesSnapshotEvent(messages=translator.messages)
                yield RunFinishedEvent(
                    thread_id=self.thread_id,
                    run_id=self.run_id,
                    outcome=RunFinishedInterruptOutcome(interrupts=[self.pending.interrupt]),
                    usage=translator.take_usage(),
                )
                if self._timeout is not None:
                    loop = asyncio.get_running_loop()
                    self._expiry = loop.call_later(self._timeout, self.give_up)
                return
            for out in translator.translate(event):
                yield out
                if isinstance(out, RunErrorEvent):  # the run failed: its last event
                    self._end()
                    return
        for out in translator.close_open():
            yield out
        translator.state["status"] = "finished"
        yield self._state()
        yield MessagesSnapshotEvent(messages=translator.messages)
        yield RunFinishedEvent(
            thread_id=self.thread_id,
            run_id=self.run_id,
            result={k: translator.state.get(k) for k in ("summary", "terminationReason")},
            outcome=RunFinishedSuccessOutcome(),
            usage=translator.take_usage(),
        )
        self._end()

    run_id = ""
    """The run reading the chat now (set by the stream before each run)."""

    def _state(self) -> StateSnapshotEvent:
        base = self._client_state if isinstance(self._client_state, dict) else {}
        return StateSnapshotEvent(snapshot={**base, "parley": dict(self._translator.state)})

    # -- the end ------------------------------------------------------------------------

    def _end(self) -> None:
        self.ended = True
        on_end, self._on_end = self._on_end, _nothing
        on_end(self)

    def give_up(self) -> None:
        """Nobody will answer or read this chat any more: answer its questions ``exit`` and
        read it to its end in the background."""
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        if self.ended and self.pending is None:
            self._end()
            return
        if self._drain is None:
            if self.pending is None and self._cancel is not None:
                # It was running for a client that went away: stop it rather than let it
                # spend on a conversation nobody reads.
                self._cancel()
            self._drain = asyncio.get_running_loop().create_task(self._read_to_end())

    async def _read_to_end(self) -> None:
        try:
            if self.pending is not None:
                request, self.pending = self.pending.request, None
                await request.a_respond(_EXIT)
            async for event in self._events:
                if isinstance(event, parley_events.InputRequestEvent):
                    await event.a_respond(_EXIT)
        except Exception:  # the chat's failure has nobody to go to now
            logger.debug(
                "an abandoned AG-UI chat of thread %s failed", self.thread_id, exc_info=True
            )
        finally:
            self._end()

    async def aclose(self) -> None:
        """Give the chat up and wait until it has ended."""
        self.give_up()
        if self._drain is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._drain


def _nothing(thread: ChatThread) -> None:
    return None


def from_error(error: BaseException) -> RunErrorEvent:
    return RunErrorEvent(message=f"{type(error).__name__}: {error}", code=type(error).__name__)


class InputRequest:
    """The question a chat waits on, and the interrupt that asks it."""

    def __init__(
        self,
        request: parley_events.InputRequestEvent,
        translator: Translator,
        timeout: float | None,
    ) -> None:
        self.request = request
        loop = asyncio.get_running_loop()
        self._deadline = None if timeout is None else loop.time() + timeout
        expires_at = None
        if timeout is not None:
            at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=timeout)
            expires_at = at.isoformat(timespec="seconds").replace("+00:00", "Z")
        call = request.content.tool_call
        call_id = None if call is None else translator.tool_call_id(call.name, call.call_id)
        self.interrupt: Interrupt = interrupt_for(
            request, f"parley-{request.content.uuid}", call_id, expires_at
        )

    def expired(self) -> bool:
        return self._deadline is not None and asyncio.get_running_loop().time() > self._deadline
