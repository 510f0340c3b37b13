"""How parley reports what it does to whoever listens: the runtime logger
(:mod:`parley.runtime_logging`), the tracer (:mod:`parley.tracing`) and the web page
(:mod:`parley.web`). The kinds of report, what each carries and the one function that makes
each are in :mod:`parley._core.reports`; this module is the machinery they share.

Two kinds of report:

- an :class:`Event` is something that happened at a point (an agent was made, a message was
  received);
- a :class:`Step` is work with a start and an end, nested in the step that was current when it
  started. A step carries ``attrs`` set at its start and completed at its end.

Nothing is built while nobody listens: the report functions of :mod:`parley._core.reports` test
:func:`listening` first and hand out the shared inert step (:data:`INERT`), so a chat without
logging or tracing pays a function call per report point. Listeners are called on the thread
that did the work (the event loop, or the worker thread running a sync tool or code block);
they must be quick and thread-safe, and what they raise is logged, never passed on to the chat.
"""

from __future__ import annotations

import contextvars
import itertools
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

__all__ = [
    "INERT",
    "Event",
    "Inert",
    "Listener",
    "Step",
    "add_listener",
    "current_step",
    "emit",
    "listening",
    "remove_listener",
]

logger = logging.getLogger(__name__)

_S = TypeVar("_S", bound="Step")  # typing.Self is 3.11+


class Listener:
    """Receives parley's reports; override what you need (each method does nothing here).

    Each kind of report is a subclass of :class:`Event` or :class:`Step`
    (:mod:`parley._core.reports`): ``isinstance`` tells them apart and types their data.

    ``step_kinds`` names the kinds of step the listener needs (None: all). A kind no
    listener needs may go unmade (``listening(kind)``; the reports make that test for
    ``reply_func``, a turn's most numerous step); the other steps then nest in its parent.
    """

    step_kinds: ClassVar[frozenset[str] | None] = None

    def on_event(self, event: Event) -> None:
        """Something happened (``event.name`` says what)."""

    def on_step_start(self, step: Step) -> None:
        """A step began; ``step.attrs`` holds its start attributes."""

    def on_step_end(self, step: Step) -> None:
        """A step ended; ``step.attrs`` now holds its end attributes too (unless it raised),
        ``step.error`` the exception that ended it, if any."""


class Event:
    """A point report: the object it is about (``source``), its data, and when. Each kind is
    a subclass naming itself in ``name`` and typing ``data``."""

    __slots__ = ("data", "source", "time")

    name: ClassVar[str] = "event"

    def __init__(self, source: Any, data: Mapping[str, Any]) -> None:
        self.source = source
        self.data = data
        self.time = time.time()

    def __repr__(self) -> str:
        return f"Event({self.name!r}, {self.source!r})"


_ids = itertools.count(1)


class Step:
    """A unit of work with a start and an end (see the module docstring), nested in the step
    current where it is made. Each kind is a subclass naming itself in ``kind``, typing
    ``attrs`` and setting the end attributes with a typed ``end``.

    ``slots`` is for listeners: each keeps what it needs there (a span, say) under its own key.
    Times are wall-clock seconds (``time.time()``) for the record and a monotonic duration.
    """

    __slots__ = (
        "_t0",
        "_token",
        "agent",
        "attrs",
        "duration",
        "end_time",
        "error",
        "id",
        "name",
        "parent",
        "slots",
        "start_time",
    )

    kind: ClassVar[str] = "step"

    def __init__(self, name: str, agent: Any, attrs: Mapping[str, Any]) -> None:
        self.id = next(_ids)
        self.name = name
        self.agent = agent
        self.parent = _current.get()
        self.attrs = attrs
        self.slots: dict[Any, Any] = {}
        self.start_time = time.time()
        self._t0 = time.perf_counter()
        self.end_time: float | None = None
        self.duration: float | None = None
        self.error: BaseException | None = None
        self._token: contextvars.Token[Step | None] | None = None

    def __enter__(self: _S) -> _S:
        self._token = _current.set(self)
        for listener in _listeners:
            try:  # inline, not through a helper: a turn enters and exits a dozen steps
                listener.on_step_start(self)
            except Exception:
                _failed(self)
        return self

    def __exit__(self, kind: Any, error: BaseException | None, tb: Any) -> None:
        self.duration = time.perf_counter() - self._t0
        self.end_time = self.start_time + self.duration
        if error is not None:
            self.error = error
        if self._token is not None:
            try:
                _current.reset(self._token)
            except ValueError:  # exited in another context (a generator closed elsewhere)
                _current.set(self.parent)
        for listener in _listeners:
            try:
                listener.on_step_end(self)
            except Exception:
                _failed(self)

    def __repr__(self) -> str:
        return f"Step({self.kind!r}, {self.name!r}, id={self.id})"


class Inert:
    """The step handed out while nobody listens: every use is a no-op, and it is falsy."""

    __slots__ = ()

    def end(self, *args: Any, **attrs: Any) -> None:
        pass

    def __enter__(self) -> Inert:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def __bool__(self) -> bool:
        return False


INERT = Inert()
"""The one inert step."""

_current: contextvars.ContextVar[Step | None] = contextvars.ContextVar("parley_step", default=None)
_listeners: tuple[Listener, ...] = ()
_wanted: frozenset[str] | None = frozenset()  # the step kinds some listener needs; None: all
_lock = threading.Lock()


def listening(kind: str | None = None) -> bool:
    """Whether any listener is registered (report functions test this before building data);
    with ``kind``, whether one needs that kind of step."""
    if kind is None:
        return bool(_listeners)
    wanted = _wanted
    return wanted is None or kind in wanted


def _kinds(listeners: tuple[Listener, ...]) -> frozenset[str] | None:
    kinds: set[str] = set()
    for listener in listeners:
        if listener.step_kinds is None:
            return None
        kinds |= listener.step_kinds
    return frozenset(kinds)


def add_listener(listener: Listener) -> None:
    """Start sending reports to ``listener`` (once, however often it is added)."""
    global _listeners, _wanted
    with _lock:
        if listener not in _listeners:
            _listeners = (*_listeners, listener)
            _wanted = _kinds(_listeners)


def remove_listener(listener: Listener) -> None:
    """Stop sending reports to ``listener`` (no error if it was not registered)."""
    global _listeners, _wanted
    with _lock:
        _listeners = tuple(x for x in _listeners if x is not listener)
        _wanted = _kinds(_listeners)


def current_step() -> Step | None:
    """The innermost step running in this context, if anyone listens."""
    return _current.get()


def emit(event: Event) -> None:
    """Report ``event`` to every listener."""
    for listener in _listeners:
        try:
            listener.on_event(event)
        except Exception:
            _failed(event)


def _failed(report: Any) -> None:
    """Log the listener's exception being handled; the chat goes on."""
    logger.exception("a parley listener failed on %r; the chat goes on", report)
