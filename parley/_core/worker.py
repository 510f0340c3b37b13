"""A thread of its own for blocking work that must always run on the same thread.

:func:`parley._core.runtime.dedicated_worker` hands out one per name and restarts it in a forked
child. Calls run one at a time, in order; an async caller awaits its result on its own loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Worker"]

T = TypeVar("T")


class Worker:
    """A thread serving calls one at a time, in order (see ``parley._core.runtime.dedicated_worker``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: queue.SimpleQueue[Callable[[], None] | None] | None = None
        self._lock = threading.Lock()

    def forget(self) -> None:
        """In a forked child: the thread stayed with the parent; the next call starts one."""
        self._lock = threading.Lock()
        self._queue = None

    def _inbox(self) -> queue.SimpleQueue[Callable[[], None] | None]:
        inbox = self._queue
        if inbox is None:
            with self._lock:
                if self._queue is None:
                    self._queue = queue.SimpleQueue()
                    thread = threading.Thread(
                        target=_serve, args=(self._queue,), name=self.name, daemon=True
                    )
                    thread.start()
                inbox = self._queue
        return inbox

    async def run(self, fn: Callable[..., T], /, *args: Any) -> T:
        """``await fn(*args)`` on the thread; a cancellation propagates at once (the call, if
        it already started, finishes unobserved)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def settle(result: T | None, error: BaseException | None) -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)  # type: ignore[arg-type]

        def call() -> None:
            if future.cancelled():
                return
            try:
                result, error = fn(*args), None
            except BaseException as e:
                result, error = None, e
            try:
                loop.call_soon_threadsafe(settle, result, error)
            except RuntimeError:
                pass  # the loop closed meanwhile: nobody waits for this any more

        self._inbox().put(call)
        return await future

    def call(self, fn: Callable[[], T], timeout: float) -> T:
        """``fn()`` on the thread, waited for from sync code for at most ``timeout`` seconds."""
        done: concurrent.futures.Future[T] = concurrent.futures.Future()

        def call() -> None:
            try:
                done.set_result(fn())
            except BaseException as e:
                done.set_exception(e)

        self._inbox().put(call)
        return done.result(timeout)


def _serve(inbox: queue.SimpleQueue[Callable[[], None] | None]) -> None:
    while (job := inbox.get()) is not None:
        job()
