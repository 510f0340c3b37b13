"""What parley reports while it works, for whoever listens: the runtime logger
(:mod:`parley.runtime_logging`) and the tracer (:mod:`parley.tracing`).

Two kinds of report:

- an :class:`Event` is something that happened at a point: an agent, a wrapper or a model
  client was made (``agent_created``, ``wrapper_created``, ``client_created``), an agent received
  a message (``received_message``);
- a :class:`Step` is work with a start and an end, nested in the step that was current when it
  started: ``chat`` > ``turn`` (one agent's ``generate_reply``) > ``reply_func`` (one reply
  function) > ``llm_call`` / ``tool_call`` / ``code_execution``; also ``speaker_selection`` and
  ``summary``. A step carries ``attrs`` set at its start and completed at its end (what each
  kind carries is listed in :data:`STEP_ATTRS`).

Nothing is built while nobody listens: :func:`step` returns one shared inert step and
:func:`emit` returns at once, so a chat without logging or tracing pays a function call per
report point. Listeners are called on the thread that did the work (the event loop, or the
worker thread running a sync tool or code block); they must be quick and thread-safe, and
what they raise is logged, never passed on to the chat.
"""

from __future__ import annotations

import contextvars
import itertools
import logging
import threading
import time
from typing import Any

__all__ = [
    "STEP_ATTRS",
    "Event",
    "Listener",
    "Step",
    "add_listener",
    "current_step",
    "emit",
    "listening",
    "remove_listener",
    "step",
]

logger = logging.getLogger(__name__)

STEP_ATTRS: dict[str, str] = {
    "chat": "start: chat_id, parent_chat_id, sender, recipient, message, max_turns; "
    "end: termination_reason, summary, cost (AutoGen's ChatResult.cost), usage (parley.usage.Usage)",
    "turn": "start: sender (name or None), messages (count); end: reply",
    "reply_func": "start: func (the callable), sender; end: final, reply",
    "llm_call": "start: request (the body, no credentials), wrapper, client, config_id, model, "
    "invocation_id, purpose, charged_to (the agent's name, as parley.usage records it), "
    "replayed (a durable chat's recorded response, not requested again); end: response, cost, cached, usage (prompt/completion/total "
    "tokens), response_model, finish_reasons",
    "tool_call": "start: arguments, call_id; end: success, result",
    "code_execution": "start: languages, code (the blocks' code, joined); end: exit_code, output",
    "speaker_selection": "start: last_speaker; end: speaker",
    "summary": "start: method; end: summary",
}
"""The ``attrs`` each kind of step carries (``Step.agent`` is the agent doing the work)."""


class Listener:
    """Receives parley's reports; override what you need (each method does nothing here)."""

    def on_event(self, event: Event) -> None:
        """Something happened (see the module docstring for the names)."""

    def on_step_start(self, step: Step) -> None:
        """A step began; ``step.attrs`` holds its start attributes."""

    def on_step_end(self, step: Step) -> None:
        """A step ended; ``step.attrs`` now holds its end attributes too, ``step.error`` the
        exception that ended it, if any."""


class Event:
    """A point report: ``name``, the object it is about (``source``), its data, and when."""

    __slots__ = ("data", "name", "source", "time")

    def __init__(self, name: str, source: Any, data: dict[str, Any]) -> None:
        self.name = name
        self.source = source
        self.data = data
        self.time = time.time()

    def __repr__(self) -> str:
        return f"Event({self.name!r}, {self.source!r})"


_ids = itertools.count(1)


class Step:
    """A unit of work with a start and an end (see the module docstring).

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
        "kind",
        "name",
        "parent",
        "slots",
        "start_time",
    )

    def __init__(
        self, kind: str, name: str, agent: Any, parent: Step | None, attrs: dict[str, Any]
    ) -> None:
        self.id = next(_ids)
        self.kind = kind
        self.name = name
        self.agent = agent
        self.parent = parent
        self.attrs = attrs
        self.slots: dict[Any, Any] = {}
        self.start_time = time.time()
        self._t0 = time.perf_counter()
        self.end_time: float | None = None
        self.duration: float | None = None
        self.error: BaseException | None = None
        self._token: contextvars.Token[Step | None] | None = None

    def set(self, **attrs: Any) -> None:
        """Add attributes (the end attributes, typically)."""
        self.attrs.update(attrs)

    def __enter__(self) -> Step:
        self._token = _current.set(self)
        for listener in _listeners:
            _call(listener.on_step_start, self)
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
            _call(listener.on_step_end, self)

    def __repr__(self) -> str:
        return f"Step({self.kind!r}, {self.name!r}, id={self.id})"


class _Inert:
    """The step handed out while nobody listens: every use is a no-op."""

    __slots__ = ()

    def set(self, **attrs: Any) -> None:
        pass

    def __enter__(self) -> _Inert:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def __bool__(self) -> bool:
        return False


_INERT = _Inert()
_current: contextvars.ContextVar[Step | None] = contextvars.ContextVar("parley_step", default=None)
_listeners: tuple[Listener, ...] = ()
_lock = threading.Lock()


def listening() -> bool:
    """Whether any listener is registered (report points test this before building data)."""
    return bool(_listeners)


def add_listener(listener: Listener) -> None:
    """Start sending reports to ``listener`` (once, however often it is added)."""
    global _listeners
    with _lock:
        if listener not in _listeners:
            _listeners = (*_listeners, listener)


def remove_listener(listener: Listener) -> None:
    """Stop sending reports to ``listener`` (no error if it was not registered)."""
    global _listeners
    with _lock:
        _listeners = tuple(x for x in _listeners if x is not listener)


def current_step() -> Step | None:
    """The innermost step running in this context, if anyone listens."""
    return _current.get()


def step(kind: str, name: str, agent: Any = None, **attrs: Any) -> Step | _Inert:
    """A step to run as ``with step(...) as s:``; inert (falsy) while nobody listens."""
    if not _listeners:
        return _INERT
    return Step(kind, name, agent, _current.get(), attrs)


def emit(name: str, source: Any, **data: Any) -> None:
    """Report event ``name`` about ``source`` to every listener."""
    if not _listeners:
        return
    event = Event(name, source, data)
    for listener in _listeners:
        _call(listener.on_event, event)


def _call(method: Any, arg: Any) -> None:
    try:
        method(arg)
    except Exception:
        logger.exception("a parley listener failed on %r; the chat goes on", arg)
