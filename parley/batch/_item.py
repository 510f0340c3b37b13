"""``BatchItem``: what a chat factory is given for one input, and how it runs its chat so
that a durable batch can start, resume or replay it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ..agentchat._sync_chat import run_sync

__all__ = ["BatchItem"]

I = TypeVar("I")  # noqa: E741 - the input's type, as in the docs
_LEASE_WAITS = 3  # lease periods a chat waits for another run of it to let go


@dataclass
class BatchItem(Generic[I]):
    """One chat of a batch, as the chat factory sees it.

    ``input`` is the input this chat is for, ``index`` its position in the inputs,
    ``attempt`` 1 on the first try (2, 3, ... on retries). With a batch ``store``,
    ``chat_id`` is the chat's durable id (``"<batch_id>/<key>"``) and ``store`` the store.

    Run the chat with :meth:`a_initiate_chat` (or :meth:`initiate_chat` in a sync factory),
    or a chat queue with :meth:`a_initiate_chats`: without a store they are the agents' own
    ``initiate_chat``; with one they start the durable chat, resume it if an earlier run was
    interrupted, or replay it (no model request) if it had finished. A factory may also call
    ``sender.a_initiate_chat(...)`` itself, but then its chat is not durable.
    """

    index: int
    input: I
    chat_id: str | None = None
    store: Any = None
    attempt: int = 1
    used: bool = field(default=False, repr=False)

    async def a_initiate_chat(self, sender: Any, recipient: Any, **kwargs: Any) -> Any:
        """``await sender.a_initiate_chat(recipient, **kwargs)``, durable with the batch's
        store (any kind of chat: two agents, or a group chat's manager as ``recipient``)."""
        self.used = True
        if self.store is None:
            return await sender.a_initiate_chat(recipient, **kwargs)
        _no_durable_keys(kwargs)

        async def run() -> Any:
            if await self.store.a_status(self.chat_id) is None:
                return await sender.a_initiate_chat(
                    recipient, store=self.store, chat_id=self.chat_id, **kwargs
                )
            return await _resume()(
                self.chat_id, store=self.store, sender=sender, recipient=recipient, **kwargs
            )

        return await self._owning(run)

    def initiate_chat(self, sender: Any, recipient: Any, **kwargs: Any) -> Any:
        """The blocking form of :meth:`a_initiate_chat`, for sync chat factories."""
        return run_sync(self.a_initiate_chat(sender, recipient, **kwargs))

    async def a_initiate_chats(
        self, chat_queue: list[dict[str, Any]], *, sender: Any = None, concurrent: bool = False
    ) -> Any:
        """A chat queue, one after another (``initiate_chats``: a list of ``ChatResult``), or
        with ``concurrent=True`` by prerequisites (``a_initiate_chats``: ``{chat_id:
        ChatResult}``); ``sender`` for entries without one. Durable with the batch's store,
        as one durable chat."""
        from ..agentchat import _queue

        self.used = True
        runner = _queue.run_concurrent if concurrent else _queue.run_sequential
        if self.store is None:
            return await runner(chat_queue, sender)

        async def run() -> Any:
            if await self.store.a_status(self.chat_id) is None:
                return await runner(chat_queue, sender, store=self.store, chat_id=self.chat_id)
            return await _resume()(
                self.chat_id, store=self.store, sender=sender, chat_queue=chat_queue
            )

        return await self._owning(run)

    async def _owning(self, run: Callable[[], Awaitable[Any]]) -> Any:
        """``run()``, again while another run holds the chat's lease: the worker a Ray chunk
        was handed to waits for the one it was taken from (merely slow, or dead and not yet
        expired) to let go, never runs beside it. A refused claim happens before the chat
        touches its agents, so trying again is safe. Bounded: a holder that keeps its lease
        past a few lease periods fails the chat with ChatLeaseError."""
        from ..exceptions import ChatLeaseError

        seconds = float(getattr(self.store, "lease_seconds", 30.0))
        deadline = time.monotonic() + _LEASE_WAITS * seconds
        while True:
            try:
                return await run()
            except ChatLeaseError as e:
                if e.lost or time.monotonic() >= deadline:
                    raise
            await asyncio.sleep(min(1.0, seconds / 4))

    def initiate_chats(
        self, chat_queue: list[dict[str, Any]], *, sender: Any = None, concurrent: bool = False
    ) -> Any:
        """The blocking form of :meth:`a_initiate_chats`."""
        return run_sync(self.a_initiate_chats(chat_queue, sender=sender, concurrent=concurrent))


def _no_durable_keys(kwargs: dict[str, Any]) -> None:
    for key in ("store", "chat_id"):
        if key in kwargs:
            raise TypeError(
                f"BatchItem.a_initiate_chat sets {key}= itself (from run_chats' store and "
                "batch_id): leave it out"
            )


def _resume() -> Any:
    # parley.durable sits above agentchat, beside this package's layer: imported when a
    # durable batch first resumes a chat.
    from ..durable import a_resume

    return a_resume
