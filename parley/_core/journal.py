"""The point where a durable chat's journal (``parley.durable``) meets the core.

A chat run with a store has a :class:`Journal` current in its context. The core asks it, at
each step whose result must survive the process (a model call, a tool call, a code block,
a human's answer), through :func:`journaled`: a step the journal holds a result for is
*replayed* (its recorded result is returned and nothing runs); any other step runs and its
result is committed before the chat goes on. A message sent is checked against the journal
(:func:`check_message`), so a resumed chat that takes another path fails at once instead of
mixing two runs' histories.

Steps are keyed by their position in the chat: the kind, the agent, and how many steps of
that kind the agent made before (a tool call also by its call id, as a message's calls run
concurrently). Replay re-runs the chat from its first message with fresh agents, so the same
steps come in the same order and find their results; the first step without one runs live.

Without a current journal each hook costs a context-variable read.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

__all__ = [
    "RERUN",
    "SKIP",
    "Entry",
    "Journal",
    "Store",
    "UncertainCall",
    "check_message",
    "current",
    "journaled",
    "lane",
    "scope",
]

T = TypeVar("T")

RERUN = "rerun"
SKIP = "skip"


@dataclass(frozen=True)
class Entry:
    """A recorded step: what was known when it started, and its result (None: none yet)."""

    start: Any
    result: Any
    done: bool


@dataclass(frozen=True)
class UncertainCall:
    """A step that was running when its chat stopped and must not simply run again."""

    kind: str
    agent: str | None
    name: str
    call_id: str | None
    arguments: Any


class Journal(Protocol):
    """One chat's journal (``parley.durable`` implements it over a store)."""

    chat_id: str

    def key(self, kind: str, agent: str | None, ident: str = "") -> str:
        """The next step's key for ``kind``/``agent``/``ident``, by position."""
        ...

    def entry(self, key: str) -> Entry | None:
        """What the journal holds for ``key`` (None: the step never started)."""
        ...

    async def start(self, key: str, start: Any) -> None:
        """Commit that step ``key`` is starting (before it runs)."""
        ...

    async def finish(self, key: str, result: Any) -> None:
        """Commit step ``key``'s result (before the chat moves on)."""
        ...

    async def end(self, termination_reason: str | None) -> None:
        """Commit that the chat ran to its end (and give the chat up: see :meth:`close`)."""
        ...

    async def close(self) -> None:
        """Give the chat up (its lease: another run may resume it now), however this run
        stopped; nothing once :meth:`end` did."""
        ...

    async def uncertain(self, call: UncertainCall) -> str:
        """What to do with a step that may or may not have taken effect: ``RERUN``, ``SKIP``,
        or a text to use as its result; or raise."""
        ...


class Store(Protocol):
    """Where durable chats keep their journals (``parley.durable.ChatStore``)."""

    async def open_chat(self, chat_id: str, header: dict[str, Any]) -> Journal:
        """The journal of chat ``chat_id``, new or (when resuming) recorded: ``header`` is
        what the chat was started with, checked against the recorded one."""
        ...


_current: contextvars.ContextVar[Journal | None] = contextvars.ContextVar(
    "parley_journal", default=None
)
_lane: contextvars.ContextVar[str] = contextvars.ContextVar("parley_journal_lane", default="")


def current() -> Journal | None:
    """The journal of the chat running in this context, if it is durable."""
    return _current.get()


@contextmanager
def scope(journal: Journal | None) -> Iterator[None]:
    """Make ``journal`` current for the body (a chat's exchange and summary); None keeps the
    current one, so a chat inside a durable chat (nested, or one of a durable queue) is
    recorded and replayed as a part of it."""
    if journal is None:
        yield
        return
    token = _current.set(journal)
    try:
        yield
    finally:
        _current.reset(token)


@contextmanager
def lane(name: str) -> Iterator[None]:
    """Key the steps of the body apart (``name`` prefixes their agent): each chat of a durable
    queue has its lane, so chats that run concurrently find their own steps on replay."""
    token = _lane.set(_lane.get() + name)
    try:
        yield
    finally:
        _lane.reset(token)


async def journaled(
    kind: str,
    agent: str | None,
    run: Callable[[], Awaitable[T]],
    *,
    ident: str = "",
    encode: Callable[[T], Any] = lambda value: value,
    decode: Callable[[Any], T] = lambda value: value,
    start: Any = None,
    uncertain: UncertainCall | None = None,
    settle: Callable[[str], T] | None = None,
) -> T:
    """``await run()``, or the result the journal recorded for this step.

    With ``start`` the step's start is committed before it runs. With ``uncertain`` (a step
    that is not idempotent), a start recorded without a result is put to the journal's
    :meth:`Journal.uncertain`: ``RERUN`` runs it, anything else becomes its result through
    ``settle``.
    """
    journal = _current.get()
    if journal is None:
        return await run()
    key = journal.key(kind, _lane.get() + (agent or ""), ident)
    entry = journal.entry(key)
    if entry is not None and entry.done:
        try:
            return decode(entry.result)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
            # A record this host wrote, but not one this step can use (a bug, an older
            # version): the chat cannot go on from it. parley's own errors say themselves.
            from ..exceptions import JournalIntegrityError, ParleyError

            if isinstance(e, ParleyError):
                raise
            raise JournalIntegrityError(
                journal.chat_id, key, f"holds no {kind} result this step can replay ({e!r})"
            ) from e
    if entry is not None and uncertain is not None and settle is not None:
        choice = await journal.uncertain(uncertain)
        if choice != RERUN:
            value = settle(choice)
            await journal.finish(key, encode(value))
            return value
    if start is not None and entry is None:
        await journal.start(key, start)
    value = await run()
    await journal.finish(key, encode(value))
    return value


def plain(value: Any) -> Any:
    """``value`` as the journal stores it (JSON; what JSON lacks, as text)."""
    return json.loads(json.dumps(value, default=str))


async def check_message(sender: str, recipient: str, message: Any) -> None:
    """Record a message sent, or check it against the one recorded at this point."""
    journal = _current.get()
    if journal is None:
        return
    # Keyed by sender: the chats of a queue run concurrently keep their own order.
    key = journal.key("message", _lane.get() + sender)
    sent = {"sender": sender, "recipient": recipient, "message": plain(message)}
    entry = journal.entry(key)
    if entry is None:
        await journal.finish(key, sent)
    elif entry.result != sent:
        from ..exceptions import ReplayDivergedError

        raise ReplayDivergedError(
            f"the resumed chat sent {sent!r} where its journal has {entry.result!r} "
            f"({key}): resume with the agents, tools and prompts of the interrupted run"
        )
