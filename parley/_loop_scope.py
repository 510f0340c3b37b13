"""The resources parley keeps for one event loop, closed when the loop shuts down.

asyncio tells nobody that a loop is about to close, with one exception: ``shutdown_asyncgens()``
(called by ``asyncio.run``, ``asyncio.Runner`` and pytest-asyncio before they close a loop)
finalizes every async generator that started on the loop and is still suspended. So a scope
starts one such generator, ``_until_shutdown``, and parks it at its ``yield``; its ``finally``
closes the scope's resources, while the loop still runs. :mod:`parley._runtime` owns the scopes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import AsyncGenerator, Awaitable, Callable, Hashable
from typing import Any, TypeVar

__all__ = ["LoopScope"]

R = TypeVar("R")


class LoopScope:
    """Resources by key for one loop; ``on_close(scope)`` runs once it is closed."""

    __slots__ = ("_abandoned", "_on_close", "_resources", "_watch", "loop")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, on_close: Callable[[LoopScope], object]
    ) -> None:
        self.loop = loop
        self._on_close = on_close
        self._resources: dict[Hashable, tuple[Any, Callable[[Any], Awaitable[object]]]] = {}
        self._abandoned = False
        # Started by hand, here, on the loop's thread: the loop's first-iteration hook registers
        # it for shutdown_asyncgens(), and no task is spent on it.
        self._watch = _until_shutdown(self)
        try:
            self._watch.asend(None).send(None)
        except StopIteration:
            pass

    def get(
        self, key: Hashable, make: Callable[[], R], close: Callable[[R], Awaitable[object]]
    ) -> R:
        entry = self._resources.get(key)
        if entry is None:
            entry = self._resources[key] = (make(), close)
        resource: R = entry[0]
        return resource

    async def aclose(self) -> None:
        """Close every resource (errors are swallowed: the loop is going away)."""
        self._on_close(self)
        entries, self._resources = list(self._resources.values()), {}
        await asyncio.gather(*(close(r) for r, close in entries), return_exceptions=True)

    def close_now(self, timeout: float) -> None:
        """Close from outside the loop, at exit: on the loop if it still runs (parley's runner)
        or can run; a closed loop's resources are abandoned."""
        loop = self.loop
        try:
            if loop.is_closed():
                self.abandon()
            elif loop.is_running():
                asyncio.run_coroutine_threadsafe(self._finish(), loop).result(timeout)
            else:
                loop.run_until_complete(self._finish())
        except (concurrent.futures.TimeoutError, RuntimeError):
            self.abandon()  # the process is ending; nothing to report to

    async def _finish(self) -> None:
        await self._watch.aclose()  # its finally closes the resources

    def abandon(self) -> None:
        """Give up on a loop that closed without shutting down its async generators: its
        connections cannot be closed any more (that needs the loop); they are dropped."""
        self._abandoned = True
        self._resources = {}
        try:
            # Finished here, so that collecting it does not ask the closed loop to finalize it.
            self._watch.aclose().send(None)
        except (StopIteration, RuntimeError):
            pass


async def _until_shutdown(scope: LoopScope) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        if not scope._abandoned:
            await scope.aclose()
