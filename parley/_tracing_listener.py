"""The listener that turns parley's steps into OpenTelemetry spans (:mod:`parley.tracing`).

Each step becomes a span whose parent is the span of the nearest enclosing step this listener
saw start, found through the step tree (``Step.parent``, the span kept in ``step.slots``) and
passed as an explicit context: the tree is right whichever task or worker thread a step runs
on, whatever OpenTelemetry's own context holds there. A step with no traced ancestor (an
outermost chat) takes OpenTelemetry's current context, so a chat started inside the
application's span is its child.

While a step runs its span is also OpenTelemetry's current span in that context, so spans
that other instrumentation makes inside it (an HTTP client a tool uses, say) are its children.

Imported only once ``opentelemetry-api`` is known to be installed.
"""

from __future__ import annotations

import threading
import traceback
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from ._core import events as _events
from ._core.reports import LLMCallStep, ReplyFuncStep
from ._credentials import redact, scrub_error
from ._tracing_attrs import end_attributes, span_name_and_attributes

__all__ = ["SpanListener"]


class _Open:
    """A step's span while it runs, and how to undo making it current (``token``, if it was)."""

    __slots__ = ("span", "thread", "token")

    def __init__(self, span: Any, token: object, thread: int) -> None:
        self.span = span
        self.token = token
        self.thread = thread


_PENDING = object()  # a reply function's slot until it shows it did something worth a span


class SpanListener(_events.Listener):
    """A span per step, on ``tracer``; message contents only with ``capture_content``.

    A reply function's span is made only if the function answered (``final``), failed, or
    did traced work (a model call, a tool, a nested chat: its span is then started with the
    function's start time). Most reply functions of a turn look at the message and pass;
    leaving them out keeps traces readable and makes tracing a turn about half as costly.

    :meth:`close` stops new spans; the listener unregisters itself once the spans it opened
    have ended, so a step that was running when tracing was disabled still gets its end.
    """

    def __init__(self, tracer: Any, capture_content: bool) -> None:
        self._tracer = tracer
        self._content = capture_content
        # Reentrant: opening a span may open its pending ancestors' first.
        self._lock = threading.RLock()
        self._running = 0
        self._closing = False

    def close(self) -> None:
        """Open no more spans; unregister once the open ones have ended."""
        with self._lock:
            self._closing = True
            done = self._running == 0
        if done:
            _events.remove_listener(self)

    def on_step_start(self, step: _events.Step) -> None:
        if self._closing:
            return
        if isinstance(step, ReplyFuncStep):
            step.slots[self] = _PENDING
            return
        self._open(step, current=True)

    def on_step_end(self, step: _events.Step) -> None:
        running = step.slots.get(self)
        if running is _PENDING and isinstance(step, ReplyFuncStep):
            if step.error is None and not step.attrs.get("final"):
                return  # it passed, and did nothing traced
            running = self._open(step, current=False)
        if not isinstance(running, _Open):
            return  # it started before this listener was registered, or after close()
        span = running.span
        try:
            attrs, failure = end_attributes(step, self._content)
            span.set_attributes(attrs)
            if step.error is not None:
                _record_error(span, step.error)
            elif failure is not None:
                span.set_attribute("error.type", f"{step.kind}_failed")
                span.set_status(Status(StatusCode.ERROR, failure))
        finally:
            self._restore(span, running)
            span.end(end_time=_ns(step.end_time) if step.end_time is not None else None)
            self._ended()

    def _open(self, step: _events.Step, current: bool) -> _Open | None:
        """Start ``step``'s span (made OpenTelemetry's current span if ``current``)."""
        with self._lock:
            running = step.slots.get(self)
            if isinstance(running, _Open):
                return running  # a child opened it first
            if self._closing:
                return None
            name, attrs = span_name_and_attributes(step, self._content)
            span = self._tracer.start_span(
                name,
                context=self._parent_context(step),
                kind=SpanKind.CLIENT if isinstance(step, LLMCallStep) else SpanKind.INTERNAL,
                attributes=attrs,
                start_time=_ns(step.start_time),
            )
            self._running += 1
            running = _Open(span, None, threading.get_ident())
            step.slots[self] = running
        if current:
            running.token = otel_context.attach(trace.set_span_in_context(span))
        return running

    def forget_lock(self) -> None:
        """A fresh lock, in a forked child: the parent's may have been held by a thread the
        child does not have."""
        self._lock = threading.RLock()

    def _parent_context(self, step: _events.Step) -> Any:
        parent = step.parent
        while parent is not None:
            running = parent.slots.get(self)
            if running is _PENDING:
                running = self._open(parent, current=False)
            if isinstance(running, _Open):
                return trace.set_span_in_context(running.span)
            parent = parent.parent
        return None  # OpenTelemetry's current context: the application's span, if any

    @staticmethod
    def _restore(span: Any, running: _Open) -> None:
        # Undo the attach only where it was made and still on top: a step ended on another
        # thread, or after an unbalanced attach by other code, leaves that context alone
        # (resetting it would raise there, and OpenTelemetry would log the failure).
        if (
            running.token is not None
            and running.thread == threading.get_ident()
            and trace.get_current_span() is span
        ):
            otel_context.detach(running.token)  # type: ignore[arg-type]

    def _ended(self) -> None:
        with self._lock:
            self._running -= 1
            done = self._closing and self._running == 0
        if done:
            _events.remove_listener(self)


def _record_error(span: Any, error: BaseException) -> None:
    # The configured credentials (and what looks like a key) are kept out of the message and
    # the stack trace, chained errors included: a server's error may echo the key.
    scrub_error(error)
    message = redact(str(error))
    stack = redact("".join(traceback.format_exception(type(error), error, error.__traceback__)))
    kind = type(error).__qualname__
    span.record_exception(
        error,
        attributes={"exception.message": message, "exception.stacktrace": stack},
    )
    span.set_attribute("error.type", kind)
    span.set_status(Status(StatusCode.ERROR, f"{kind}: {message}"[:500]))


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)
