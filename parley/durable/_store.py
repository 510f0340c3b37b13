"""What every durable-chat store does, over a few blocking primitives a backend implements
(SQLite: ``_sqlite_store.py``; Redis: ``_redis_store.py``; your own: subclass
:class:`BaseChatStore`, ``website/docs/durable-chats.md``).

A store keeps, per chat, a *header* (what the chat was started with), a status (``running``
until the chat ends, then ``done``), its *steps* (``key -> (seq, start, result, done)``, start
and result as JSON text) and a *lease* (which run owns the chat now: ``_lease.py``). Each header
and step carries a MAC under the store's key (``_keys.py``), checked before anything read back
is used. The primitives run on one worker thread of their own (``parley-durable``,
``_store_calls.py``), so a backend may hold a blocking connection; the chat's loop awaits them.
The lease primitives ``renew_lease`` and ``release_lease`` are also called from the lease
thread. Each write is committed before it returns: that is what makes a step durable.
"""

from __future__ import annotations

import asyncio
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from .._renamed import mirror_renamed
from ..agentchat._sync_chat import sync_of
from ..exceptions import ChatLeaseError, DurableChatError
from ._keys import Signer, resolve_key
from ._lease import LEASE_SECONDS, Lease, hold, new_owner, owner_is_dead
from ._records import PendingInput, Record, StepRow, header_of, pending_input, records_of
from ._resuming import resuming
from ._store_calls import checked_write, let_go, on_worker
from ._store_journal import StoreJournal

__all__ = ["BaseChatStore", "PendingInput", "StepRow"]

T = TypeVar("T")

_HUMAN = "human/"


class BaseChatStore(ABC):
    """A durable chats' store: pass it as ``initiate_chat(..., store=store, chat_id=...)``.

    ``key`` authenticates the journal (``_keys.py``: None takes ``$PARLEY_DURABLE_KEY`` or the
    user's key file); ``lease_seconds`` is how long a run's claim on a chat outlives its last
    renewal (a dead run's chat can be resumed elsewhere after that).

    Each query has a blocking form (``store.status(chat_id)``) and an async one
    (``await store.a_status(chat_id)``).

    **Writing a store.** Subclass this class (call its ``__init__`` with ``key=`` and
    ``lease_seconds=``) and implement the blocking primitives below (:meth:`read_chat`,
    :meth:`create_chat`, :meth:`sign_header`, :meth:`read_steps`, :meth:`write_step`,
    :meth:`answer_step`, :meth:`end_chat`, :meth:`chat_ids`, :meth:`claim_lease`,
    :meth:`renew_lease`, :meth:`release_lease`) and :attr:`location`. parley calls them, never
    users: they run on the store's worker thread (renew and release also on the lease thread),
    so each must be safe to call from another thread than the one that built the store. A
    step's write and a chat's end must check the lease in the same transaction as the write.
    The records are signed and checked here; a backend stores the MACs it is given as opaque
    text. (parley's earlier releases named the primitives with a leading underscore,
    ``_write_step``, ...: a store written so still works.)"""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        mirror_renamed(cls, _RENAMED)

    def __init__(self, *, key: bytes | str | None = None, lease_seconds: float = LEASE_SECONDS):
        if not isinstance(lease_seconds, (int, float)) or not lease_seconds > 0:
            raise ValueError(f"lease_seconds must be a positive number, got {lease_seconds!r}")
        self.lease_seconds = float(lease_seconds)
        self._journal_key = resolve_key(key)
        self._signer = Signer(self._journal_key)

    @property
    def key(self) -> bytes:
        """The key this store signs and checks its records with (to make the same store in
        another process; keep it as secret as the key file)."""
        return self._journal_key

    # -- the primitives a backend implements (blocking; run on the store's worker thread) --
    # Public: a store author implements them; parley calls them (users call the queries below).

    @abstractmethod
    def read_chat(self, chat_id: str) -> tuple[str, str, str | None] | None:
        """``(header JSON, status, header MAC)`` of ``chat_id``, None if there is no such chat."""

    @abstractmethod
    def create_chat(self, chat_id: str, header: str, mac: str, now: float) -> bool:
        """Record a new running chat; False (and nothing written) if ``chat_id`` exists."""

    @abstractmethod
    def sign_header(self, chat_id: str, mac: str) -> None:
        """Set the header's MAC (adopting a chat an older parley wrote)."""

    @abstractmethod
    def read_steps(self, chat_id: str) -> list[StepRow]:
        """The chat's steps, in ``seq`` order, each a ``StepRow``: ``(key, seq, start JSON,
        result JSON, done, MAC)`` as :meth:`write_step` was given it."""

    @abstractmethod
    def write_step(self, chat_id: str, row: StepRow, owner: str) -> str | None:
        """Insert the step ``row`` (``(key, seq, start JSON, result JSON, done, MAC)``), or
        replace its result, done flag and MAC (its start and seq stay), if ``owner`` holds the
        chat's lease (or nobody does: then ``owner`` takes it). Else write nothing and return
        the lease's owner."""

    @abstractmethod
    def answer_step(self, chat_id: str, key: str, result: str, mac: str) -> bool:
        """Set a started, not done step's result and MAC; False if it is done (or absent)."""

    @abstractmethod
    def end_chat(self, chat_id: str, reason: str | None, now: float, owner: str) -> str | None:
        """Mark the chat done, with its termination reason, and release ``owner``'s lease; as
        :meth:`write_step` when another run holds the lease."""

    @abstractmethod
    def chat_ids(self, status: str | None) -> list[str]:
        """The chats (with ``status`` only, if given), oldest first."""

    @abstractmethod
    def claim_lease(self, chat_id: str, owner: str, seconds: float, dead: str) -> str | None:
        """Atomically: give ``owner`` the chat's lease for ``seconds`` unless another owner
        holds an unexpired one (``dead``, an owner known to be gone, does not count); None
        when claimed, else the holder."""

    @abstractmethod
    def renew_lease(self, chat_id: str, owner: str, seconds: float) -> bool:
        """Extend ``owner``'s lease by ``seconds`` from now (retaking it if it lapsed and nobody
        took it); False if another owner holds it."""

    @abstractmethod
    def release_lease(self, chat_id: str, owner: str) -> None:
        """Drop the lease if ``owner`` holds it."""

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the chats are (a file, a server), for messages."""

    # -- what users and the core call --

    async def _run(self, work: Callable[[], T]) -> T:
        return await on_worker(work)

    async def a_header(self, chat_id: str) -> dict[str, Any] | None:
        """What chat ``chat_id`` was started with (None: no such chat)."""
        chat = await self._run(partial(self.read_chat, chat_id))
        return None if chat is None else header_of(self._signer, chat_id, chat[0], chat[2])

    async def a_status(self, chat_id: str) -> str | None:
        """``"running"`` (started, not ended: resumable), ``"done"``, or None (no such chat)."""
        chat = await self._run(partial(self.read_chat, chat_id))
        return None if chat is None else chat[1]

    async def a_chats(self, status: str | None = None) -> list[str]:
        """The ids of the chats in the store (only those with ``status``, if given)."""
        return await self._run(partial(self.chat_ids, status))

    async def a_steps(self, chat_id: str) -> list[tuple[str, Any, Any]]:
        """The chat's recorded steps in order: ``(key, start, result)`` (None: not recorded);
        each checked against its MAC (:class:`JournalIntegrityError`)."""
        return [(r.key, r.start, r.result) for r in await self._records(chat_id)]

    async def _records(self, chat_id: str) -> list[Record]:
        rows = await self._run(partial(self.read_steps, chat_id))
        return records_of(self._signer, chat_id, rows)

    async def a_pending_inputs(self, chat_id: str | None = None) -> list[PendingInput]:
        """The human inputs asked for and not answered, of the running chats (or of
        ``chat_id``): a chat paused by :class:`parley.durable.PausingIO`, or one whose process
        died while it waited for its human. An approval (a tool call or code blocks waiting
        for the human) carries what it is about (``PendingInput.tool_call`` /
        ``code_blocks``). Answer with :meth:`a_answer`, then resume."""
        return [pending for pending, _ in await self._pending(chat_id)]

    async def _pending(self, chat_id: str | None) -> list[tuple[PendingInput, Record]]:
        ids = [chat_id] if chat_id is not None else await self.a_chats("running")
        out = []
        for cid in ids:
            for record in await self._records(cid):
                if not record.key.startswith(_HUMAN) or record.start_text is None or record.done:
                    continue
                out.append((pending_input(cid, record.key, record.start), record))
        return out

    async def a_answer(self, chat_id: str, text: str, *, agent: str | None = None) -> PendingInput:
        """Answer chat ``chat_id``'s pending human input with ``text`` (the one of ``agent``,
        when several agents wait) and return what was answered. The first answer wins: a
        second one raises :class:`DurableChatError`, as does a chat with nothing pending.
        ``resume`` then goes on from the answer."""
        if not isinstance(text, str):
            raise TypeError(f"the answer must be a str, got {type(text).__name__}")
        waiting = [(p, r) for p, r in await self._pending(chat_id) if agent in (None, p.agent)]
        if not waiting:
            raise DurableChatError(
                f"chat {chat_id!r} has no pending input"
                + (f" of agent {agent!r}" if agent else "")
                + " (answered already, or never asked)"
            )
        if len(waiting) > 1:
            raise DurableChatError(
                f"chat {chat_id!r} waits for several agents' input "
                f"({', '.join(p.agent for p, _ in waiting)}): name one with agent="
            )
        pending, record = waiting[0]
        result = json.dumps(text)
        mac = self._signer.step(chat_id, record.key, record.seq, record.start_text, result, True)
        if not await self._run(partial(self.answer_step, chat_id, pending.key, result, mac)):
            raise DurableChatError(f"chat {chat_id!r}'s input {pending.key} was answered already")
        return pending

    async def a_lease(self, chat_id: str) -> str | None:
        """Who holds chat ``chat_id`` now (an owner id), None if nobody does: tried by
        claiming it for an instant, so a lease whose process is known to be gone reads None."""
        owner = new_owner()
        holder = await self._claim_once(chat_id, owner)
        if holder is None:
            await self._run(partial(self.release_lease, chat_id, owner))
        return holder

    async def a_adopt_unsigned(self, chat_id: str) -> int:
        """Sign chat ``chat_id``'s records that carry no MAC (a parley older than journal keys
        wrote them) and return how many: do it once, and only for a store nobody else could
        write since, since whatever they hold is taken as this host's from then on. A record
        with a wrong MAC is never adopted (:class:`JournalIntegrityError`)."""
        owner = await self._take_lease(chat_id, 0.0)
        try:
            chat = await self._run(partial(self.read_chat, chat_id))
            if chat is None:
                raise DurableChatError(f"no chat {chat_id!r} in {self.location}")
            header_text, _, header_mac = chat
            if header_mac is None:
                signed = self._signer.header(chat_id, header_text)
                await self._run(partial(self.sign_header, chat_id, signed))
            else:
                header_of(self._signer, chat_id, header_text, header_mac)  # a wrong MAC raises
            adopted = int(header_mac is None)
            for row in await self._run(partial(self.read_steps, chat_id)):
                key, seq, start, result, done, mac = row
                if mac is None:
                    signed = self._signer.step(chat_id, key, seq, start, result, done)
                    await checked_write(self, chat_id, (*row[:5], signed), owner)
                    adopted += 1
                else:
                    records_of(self._signer, chat_id, [row])  # a wrong MAC raises
            return adopted
        finally:
            await self._run(partial(self.release_lease, chat_id, owner))

    header = sync_of(a_header, "header")
    status = sync_of(a_status, "status")
    chats = sync_of(a_chats, "chats")
    steps = sync_of(a_steps, "steps")
    pending_inputs = sync_of(a_pending_inputs, "pending_inputs")
    answer = sync_of(a_answer, "answer")
    lease = sync_of(a_lease, "lease")
    adopt_unsigned = sync_of(a_adopt_unsigned, "adopt_unsigned")

    # -- leases ---------------------------------------------------------------------------

    async def _claim_once(self, chat_id: str, owner: str) -> str | None:
        claim = partial(self.claim_lease, chat_id, owner, self.lease_seconds)
        holder = await self._run(partial(claim, ""))
        if holder is not None and owner_is_dead(holder):
            holder = await self._run(partial(claim, holder))
        return holder

    async def _take_lease(self, chat_id: str, wait: float) -> str:
        """A new owner id holding chat ``chat_id``'s lease; ChatLeaseError if another live run
        holds it (still after ``wait`` seconds)."""
        owner = new_owner()
        deadline = time.monotonic() + wait
        while True:
            holder = await self._claim_once(chat_id, owner)
            if holder is None:
                return owner
            if time.monotonic() >= deadline:
                raise ChatLeaseError(chat_id, holder)
            await asyncio.sleep(min(0.5, self.lease_seconds / 4))

    # -- the journal ----------------------------------------------------------------------

    async def open_chat(self, chat_id: str, header: dict[str, Any]) -> StoreJournal:
        """The journal of chat ``chat_id``, its lease held by this run: a new one, or, inside
        ``resume``, the recorded one (after checking every record and that the same agents
        take part)."""
        resume = resuming.get()
        resuming_this = resume is not None and resume.chat_id == chat_id
        owner = await self._take_lease(chat_id, 0.0)
        lease = Lease(self, chat_id, owner, self.lease_seconds)
        hold(lease)
        try:
            text = json.dumps(header)
            mac = self._signer.header(chat_id, text)
            created = await self._run(partial(self.create_chat, chat_id, text, mac, time.time()))
            if created:
                return StoreJournal(self, self._signer, lease, [], None)
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
            records = await self._records(chat_id)
            policy = resume.on_uncertain_tool if resume is not None else None
            return StoreJournal(self, self._signer, lease, records, policy)
        except BaseException:
            await let_go(self, lease)
            raise


# The primitives' names before they were public; kept working (parley._renamed).
_RENAMED = {
    "read_chat": "_read_chat",
    "create_chat": "_create_chat",
    "sign_header": "_sign_header",
    "read_steps": "_read_steps",
    "write_step": "_write_step",
    "answer_step": "_answer_step",
    "end_chat": "_end_chat",
    "chat_ids": "_chat_ids",
    "claim_lease": "_claim",
    "renew_lease": "_renew",
    "release_lease": "_release",
}
mirror_renamed(BaseChatStore, _RENAMED)
