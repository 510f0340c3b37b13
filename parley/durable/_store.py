"""What every durable-chat store does, over a few blocking primitives a backend implements
(SQLite: ``_sqlite_store.py``; Redis: ``_redis_store.py``).

A store keeps, per chat, a *header* (what the chat was started with), a status (``running``
until the chat ends, then ``done``) and its *steps*: ``key -> (seq, start, result, done)``,
start and result as JSON text. The primitives run on one worker thread of their own
(``parley-durable``), so a backend may hold a blocking connection; the chat's loop awaits them.
Each write is committed before it returns: that is what makes a step durable.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from .. import _journal
from .._runtime import dedicated_worker
from ..agentchat._sync_chat import sync_of
from ..exceptions import DurableChatError
from ._resuming import UncertainPolicy, decide, resuming

__all__ = ["BaseChatStore", "PendingInput", "StepRow"]

T = TypeVar("T")

StepRow = tuple[str, int, str | None, str | None, bool]
"""A stored step: ``(key, seq, start JSON, result JSON, done)``."""

_worker = dedicated_worker("parley-durable")
_HUMAN = "human/"


@dataclass(frozen=True)
class PendingInput:
    """A human input a durable chat asked for and nobody answered yet (see
    :meth:`BaseChatStore.pending_inputs`)."""

    chat_id: str
    agent: str
    prompt: str
    key: str


class BaseChatStore(ABC):
    """A durable chats' store: pass it as ``initiate_chat(..., store=store, chat_id=...)``.

    Each query has a blocking form (``store.status(chat_id)``) and an async one
    (``await store.a_status(chat_id)``)."""

    # -- the primitives a backend implements (blocking; run on the store's worker thread) --

    @abstractmethod
    def _read_chat(self, chat_id: str) -> tuple[str, str] | None:
        """``(header JSON, status)`` of ``chat_id``, None if there is no such chat."""

    @abstractmethod
    def _create_chat(self, chat_id: str, header: str, now: float) -> bool:
        """Record a new running chat; False (and nothing written) if ``chat_id`` exists."""

    @abstractmethod
    def _read_steps(self, chat_id: str) -> list[StepRow]:
        """The chat's steps, in ``seq`` order."""

    @abstractmethod
    def _write_step(self, chat_id: str, row: StepRow) -> None:
        """Insert the step, or replace its result and done flag (its start and seq stay)."""

    @abstractmethod
    def _answer_step(self, chat_id: str, key: str, result: str) -> bool:
        """Set a started, not done step's result; False if it is done already (or absent)."""

    @abstractmethod
    def _end_chat(self, chat_id: str, reason: str | None, now: float) -> None:
        """Mark the chat done, with its termination reason."""

    @abstractmethod
    def _chat_ids(self, status: str | None) -> list[str]:
        """The chats (with ``status`` only, if given), oldest first."""

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the chats are (a file, a server), for messages."""

    # -- what users and the core call --

    async def _run(self, work: Callable[[], T]) -> T:
        return await _worker.run(work)

    async def a_header(self, chat_id: str) -> dict[str, Any] | None:
        """What chat ``chat_id`` was started with (None: no such chat)."""
        chat = await self._run(partial(self._read_chat, chat_id))
        return None if chat is None else dict(json.loads(chat[0]))

    async def a_status(self, chat_id: str) -> str | None:
        """``"running"`` (started, not ended: resumable), ``"done"``, or None (no such chat)."""
        chat = await self._run(partial(self._read_chat, chat_id))
        return None if chat is None else chat[1]

    async def a_chats(self, status: str | None = None) -> list[str]:
        """The ids of the chats in the store (only those with ``status``, if given)."""
        return await self._run(partial(self._chat_ids, status))

    async def a_steps(self, chat_id: str) -> list[tuple[str, Any, Any]]:
        """The chat's recorded steps in order: ``(key, start, result)`` (None: not recorded)."""
        rows = await self._run(partial(self._read_steps, chat_id))
        return [(key, _load(start), _load(result)) for key, _, start, result, _ in rows]

    async def a_pending_inputs(self, chat_id: str | None = None) -> list[PendingInput]:
        """The human inputs asked for and not answered, of the running chats (or of
        ``chat_id``): a chat paused by :class:`parley.durable.PausingIO`, or one whose process
        died while it waited for its human. Answer with :meth:`a_answer`, then resume."""
        return await self._run(partial(self._pending, chat_id))

    def _pending(self, chat_id: str | None) -> list[PendingInput]:
        ids = [chat_id] if chat_id is not None else self._chat_ids("running")
        out = []
        for cid in ids:
            for key, _, start, _, done in self._read_steps(cid):
                if key.startswith(_HUMAN) and start is not None and not done:
                    asked = json.loads(start)
                    out.append(PendingInput(cid, asked["agent"], asked["prompt"], key))
        return out

    async def a_answer(self, chat_id: str, text: str, *, agent: str | None = None) -> PendingInput:
        """Answer chat ``chat_id``'s pending human input with ``text`` (the one of ``agent``,
        when several agents wait) and return what was answered. The first answer wins: a
        second one raises :class:`DurableChatError`, as does a chat with nothing pending.
        ``resume`` then goes on from the answer."""
        if not isinstance(text, str):
            raise TypeError(f"the answer must be a str, got {type(text).__name__}")
        waiting = [p for p in await self.a_pending_inputs(chat_id) if agent in (None, p.agent)]
        if not waiting:
            raise DurableChatError(
                f"chat {chat_id!r} has no pending input"
                + (f" of agent {agent!r}" if agent else "")
                + " (answered already, or never asked)"
            )
        if len(waiting) > 1:
            raise DurableChatError(
                f"chat {chat_id!r} waits for several agents' input "
                f"({', '.join(p.agent for p in waiting)}): name one with agent="
            )
        pending = waiting[0]
        if not await self._run(partial(self._answer_step, chat_id, pending.key, json.dumps(text))):
            raise DurableChatError(f"chat {chat_id!r}'s input {pending.key} was answered already")
        return pending

    header = sync_of(a_header, "header")
    status = sync_of(a_status, "status")
    chats = sync_of(a_chats, "chats")
    steps = sync_of(a_steps, "steps")
    pending_inputs = sync_of(a_pending_inputs, "pending_inputs")
    answer = sync_of(a_answer, "answer")

    async def open_chat(self, chat_id: str, header: dict[str, Any]) -> _journal.Journal:
        """The journal of chat ``chat_id``: a new one, or, inside ``resume``, the recorded one
        (after checking that the same agents take part)."""
        resume = resuming.get()
        resuming_this = resume is not None and resume.chat_id == chat_id
        text = json.dumps(header)
        created = await self._run(partial(self._create_chat, chat_id, text, time.time()))
        if created:
            return _StoreJournal(self, chat_id, {}, None)
        if not resuming_this:
            raise DurableChatError(
                f"chat {chat_id!r} is already in {self.location}: resume it with "
                "parley.durable.resume, or start a chat with another chat_id"
            )
        recorded = await self.a_header(chat_id) or {}
        for role in ("sender", "recipient", "queue"):
            if recorded.get(role) != header.get(role):
                raise DurableChatError(
                    f"chat {chat_id!r} was recorded with {role} {recorded.get(role)!r}, "
                    f"resumed with {header.get(role)!r}"
                )
        rows = await self._run(partial(self._read_steps, chat_id))
        entries = {
            key: _journal.Entry(_load(start), _load(result), done)
            for key, _, start, result, done in rows
        }
        policy = resume.on_uncertain_tool if resume is not None else None
        return _StoreJournal(self, chat_id, entries, policy)


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


class _StoreJournal:
    """One chat's journal (``parley._journal.Journal``) over a store: the recorded steps are
    read once, at open; each new one is written through."""

    def __init__(
        self,
        store: BaseChatStore,
        chat_id: str,
        entries: dict[str, _journal.Entry],
        policy: UncertainPolicy | None,
    ) -> None:
        self.chat_id = chat_id
        self._store = store
        self._entries = entries
        self._policy = policy
        self._counts: defaultdict[tuple[str, str | None, str], int] = defaultdict(int)
        self._seq = len(entries)

    def key(self, kind: str, agent: str | None, ident: str = "") -> str:
        n = self._counts[kind, agent, ident]
        self._counts[kind, agent, ident] = n + 1
        return f"{kind}/{agent or ''}/{ident}#{n}"

    def entry(self, key: str) -> _journal.Entry | None:
        return self._entries.get(key)

    async def start(self, key: str, start: Any) -> None:
        await self._write(key, start, None, False)

    async def finish(self, key: str, result: Any) -> None:
        entry = self._entries.get(key)
        await self._write(key, None if entry is None else entry.start, result, True)

    async def _write(self, key: str, start: Any, result: Any, done: bool) -> None:
        try:
            start_text = None if start is None else json.dumps(start)
            result_text = None if result is None else json.dumps(result)
        except TypeError as e:  # something a step holds has no JSON form
            raise DurableChatError(f"a durable chat cannot record step {key}: {e}") from e
        self._seq += 1
        row = (key, self._seq, start_text, result_text, done)
        await self._store._run(partial(self._store._write_step, self.chat_id, row))
        self._entries[key] = _journal.Entry(start, result, done)

    async def end(self, termination_reason: str | None) -> None:
        await self._store._run(
            partial(self._store._end_chat, self.chat_id, termination_reason, time.time())
        )

    async def uncertain(self, call: _journal.UncertainCall) -> str:
        return await decide(self._policy, call)
