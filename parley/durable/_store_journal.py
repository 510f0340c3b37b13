"""One chat's journal (``parley._core.journal.Journal``) over a store: the recorded steps are read
(and checked) once, at open; each new one is signed and written through, under the run's
lease."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from .._core import journal as _journal
from ..exceptions import DurableChatError
from ._keys import Signer
from ._lease import Lease, release
from ._records import Record
from ._resuming import UncertainPolicy, decide
from ._store_calls import checked_end, checked_write, let_go

if TYPE_CHECKING:
    from ._store import BaseChatStore

__all__ = ["StoreJournal"]


class StoreJournal:
    """The journal of the chat ``lease`` holds."""

    def __init__(
        self,
        store: BaseChatStore,
        signer: Signer,
        lease: Lease,
        records: list[Record],
        policy: UncertainPolicy | None,
    ) -> None:
        self.chat_id = lease.chat_id
        self._store = store
        self._signer = signer
        self._lease = lease
        self._policy = policy
        self._entries = {r.key: _journal.Entry(r.start, r.result, r.done) for r in records}
        # What the store keeps of a step once written: its seq and start (a result written
        # later is signed with them).
        self._stored = {r.key: (r.seq, r.start_text) for r in records}
        self._seq = max((r.seq for r in records), default=0)
        self._counts: defaultdict[tuple[str, str | None, str], int] = defaultdict(int)
        self._closed = False

    def key(self, kind: str, agent: str | None, ident: str = "") -> str:
        n = self._counts[kind, agent, ident]
        self._counts[kind, agent, ident] = n + 1
        return f"{kind}/{agent or ''}/{ident}#{n}"

    def entry(self, key: str) -> _journal.Entry | None:
        return self._entries.get(key)

    async def start(self, key: str, start: Any) -> None:
        await self._write(key, start, None, False)

    async def finish(self, key: str, result: Any) -> None:
        await self._write(key, None, result, True)

    async def _write(self, key: str, start: Any, result: Any, done: bool) -> None:
        stored = self._stored.get(key)
        try:
            start_text = None if start is None or stored else json.dumps(start)
            result_text = None if result is None else json.dumps(result)
        except TypeError as e:  # something a step holds has no JSON form
            raise DurableChatError(f"a durable chat cannot record step {key}: {e}") from e
        if stored is None:
            self._seq += 1
            seq = self._seq
        else:
            seq, start_text = stored
            old = self._entries.get(key)
            start = None if old is None else old.start
        mac = self._signer.step(self.chat_id, key, seq, start_text, result_text, done)
        row = (key, seq, start_text, result_text, done, mac)
        await checked_write(self._store, self.chat_id, row, self._lease.owner)
        self._stored[key] = (seq, start_text)
        self._entries[key] = _journal.Entry(start, result, done)

    async def end(self, termination_reason: str | None) -> None:
        self._closed = True
        release(self._lease)
        await checked_end(self._store, self.chat_id, termination_reason, self._lease.owner)

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await let_go(self._store, self._lease)

    async def uncertain(self, call: _journal.UncertainCall) -> str:
        return await decide(self._policy, call)
