"""Cancellation that reaches blocking work running in worker threads.

asyncio cancels a task at its next ``await``, but a blocking call that the task handed to a
worker thread (a code block being executed, a user's sync callback) does not notice: the thread
runs on, and so do the processes it started. :func:`run_in_thread` is ``asyncio.to_thread``
plus a :class:`CancelToken` that the worker can watch through :func:`current_token`. Cancelling
the awaiting task cancels the token, then waits (bounded) for the worker to wind down, so that
once the cancellation has completed, the work it stood for has stopped too.

Code that blocks on something it can interrupt polls ``token.cancelled`` or waits with
``token.wait(timeout)`` instead of sleeping, or registers ``token.on_cancel(callback)``.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["WIND_DOWN_SECONDS", "CancelToken", "current_token", "run_in_thread"]

T = TypeVar("T")

WIND_DOWN_SECONDS = 5.0
"""How long a cancelled :func:`run_in_thread` waits for its worker before giving up on it.
Workers that watch their token (the code executors) stop well within a second."""

_current: contextvars.ContextVar[CancelToken | None] = contextvars.ContextVar(
    "parley_cancel_token", default=None
)


class CancelToken:
    """A one-way flag saying "stop", safe to set from any thread."""

    __slots__ = ("_callbacks", "_event", "_lock")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], object]] = []

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` has been called."""
        return self._event.is_set()

    def cancel(self) -> None:
        """Set the flag and run the registered callbacks (once; later calls do nothing)."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def wait(self, timeout: float | None) -> bool:
        """Sleep until cancelled or ``timeout`` seconds passed; whether it was cancelled."""
        return self._event.wait(timeout)

    def on_cancel(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Run ``callback`` when the token is cancelled (at once if it already is); returns a
        function that unregisters it."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)

                def remove() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return remove
        callback()
        return lambda: None


def current_token() -> CancelToken | None:
    """The token of the :func:`run_in_thread` call this code runs under, if any."""
    return _current.get()


async def run_in_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``await fn(*args, **kwargs)`` in a worker thread, with the caller's context variables.

    If the awaiting task is cancelled, the worker's token is cancelled and the cancellation
    waits up to :data:`WIND_DOWN_SECONDS` for the worker to return before it propagates.
    """
    loop = asyncio.get_running_loop()
    token = CancelToken()
    context = contextvars.copy_context()
    context.run(_current.set, token)
    future = loop.run_in_executor(None, functools.partial(context.run, fn, *args, **kwargs))
    try:
        # Shielded: cancelling the task must leave us the worker's future to wait for.
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        token.cancel()
        await asyncio.wait({future}, timeout=WIND_DOWN_SECONDS)
        if future.done() and not future.cancelled():
            future.exception()  # retrieved: the worker's error is moot once we were cancelled
        raise
