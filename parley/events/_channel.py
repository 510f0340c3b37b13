"""The queue between a run's chat and its consumer: events go in from whatever thread made them
(the chat's event loop, a worker thread running a tool or asking the human) and come out in
order to one consumer, a thread (:meth:`EventChannel.get`) or a coroutine
(:meth:`EventChannel.a_get`) on any loop.

A put costs a lock and, only when the consumer is asleep, a wake-up: a consumer that keeps up
is woken once per burst of events, not once per event.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import Generic, TypeVar

__all__ = ["EventChannel"]

T = TypeVar("T")


class EventChannel(Generic[T]):
    """Items in order, from any number of threads to one consumer."""

    __slots__ = ("_items", "_lock", "_waiter", "_wake")

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()  # a thread consumer sleeps on it
        # a coroutine consumer sleeps on this future of its loop
        self._waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None

    def put(self, item: T) -> None:
        with self._lock:
            self._items.append(item)
            waiter, self._waiter = self._waiter, None
        self._wake.set()
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
        while True:
            with self._lock:
                if self._items:
                    return self._items.popleft()
                self._wake.clear()
            if not self._wake.wait(timeout):
                raise TimeoutError("no event came in time")

    async def a_get(self) -> T:
        """The next item, awaiting it."""
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                if self._items:
                    return self._items.popleft()
                future = loop.create_future()
                self._waiter = (loop, future)
            await future

    def __len__(self) -> int:
        return len(self._items)


def _release(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
