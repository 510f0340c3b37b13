"""The queue between a run's chat and its consumer: events go in from whatever thread made them
(the chat's event loop, a worker thread running a tool or asking the human) and come out in
order to one consumer, a thread (:meth:`EventChannel.get`) or a coroutine
(:meth:`EventChannel.a_get`) on any loop.

A thread consumer waits in ``queue.SimpleQueue`` (C code: a put is a lock release, no Python
condition), which keeps the hand-off per event to a few microseconds; a coroutine consumer
registers a future that the next put completes.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from typing import Generic, TypeVar

__all__ = ["EventChannel"]

T = TypeVar("T")


class EventChannel(Generic[T]):
    """Items in order, from any number of threads to one consumer."""

    __slots__ = ("_items", "_lock", "_waiter")

    def __init__(self) -> None:
        self._items: queue.SimpleQueue[T] = queue.SimpleQueue()
        self._lock = threading.Lock()
        # a coroutine consumer sleeps on this future of its loop
        self._waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None

    def put(self, item: T) -> None:
        self._items.put(item)
        if self._waiter is None:  # no coroutine waits: the common case, without the lock
            return
        with self._lock:
            waiter, self._waiter = self._waiter, None
        if waiter is not None:
            loop, future = waiter
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                _release(future)
            elif not loop.is_closed():
                loop.call_soon_threadsafe(_release, future)

    def get(self, timeout: float | None = None) -> T:
        """The next item, waiting for it (``TimeoutError`` after ``timeout`` seconds)."""
        try:
            return self._items.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("no event came in time") from None

    async def a_get(self) -> T:
        """The next item, awaiting it."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                return self._items.get_nowait()
            except queue.Empty:
                pass
            future = loop.create_future()
            with self._lock:
                self._waiter = (loop, future)
            try:
                # a put between the first look and the registration did not see the waiter
                item = self._items.get_nowait()
            except queue.Empty:
                await future
                continue
            with self._lock:
                if self._waiter is not None and self._waiter[1] is future:
                    self._waiter = None
            return item

    def __len__(self) -> int:
        return self._items.qsize()


def _release(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
