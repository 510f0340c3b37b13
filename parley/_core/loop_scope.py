"""The resources parley keeps for one event loop, closed when the loop shuts down.

asyncio tells nobody that a loop is about to close, with one exception: ``shutdown_asyncgens()``
(called by ``asyncio.run``, ``asyncio.Runner`` and pytest-asyncio before they close a loop)
finalizes every async generator that started on the loop and is still suspended. So a scope
starts one such generator, ``_until_shutdown``, and parks it at its ``yield``; its ``finally``
closes the scope's resources, while the loop still runs. :mod:`parley._core.runtime` owns the scopes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Hashable
from typing import Any, TypeVar

__all__ = ["LoopScope"]

R = TypeVar("R")

logger = logging.getLogger("parley")


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

    def close_now(self, timeout: float) -> list[Any]:
        """Close from outside the loop, at exit: on the loop if it still runs (parley's runner)
        or can run. Returns what could not be closed (see :meth:`abandon`)."""
        loop = self.loop
        try:
            if loop.is_closed():
                return self.abandon()
            if loop.is_running():
                asyncio.run_coroutine_threadsafe(self._finish(), loop).result(timeout)
            else:
                loop.run_until_complete(self._finish())
        except (concurrent.futures.TimeoutError, RuntimeError):
            return self.abandon()  # the process is ending; nothing to report to
        return []

    async def _finish(self) -> None:
        await self._watch.aclose()  # its finally closes the resources

    def abandon(self) -> list[Any]:
        """Give up on a loop that closed without shutting down its async generators, and
        return its resources: closing them needs the loop, so they stay open, and they must
        be kept referenced (collecting an openai client schedules its close on whatever loop
        runs then, and its sockets warn "unclosed transport")."""
        self._abandoned = True
        resources = [resource for resource, _ in self._resources.values()]
        self._resources = {}
        if resources:
            logger.warning(
                "an event loop was closed without loop.shutdown_asyncgens(), so parley could not "
                "close the HTTP connections it had open on it; run async code with asyncio.run() "
                "or shut the loop's async generators down before closing it"
            )
        try:
            # Finished here, so that collecting it does not ask the closed loop to finalize it.
            self._watch.aclose().send(None)
        except (StopIteration, RuntimeError):
            pass
        return resources


async def _until_shutdown(scope: LoopScope) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        if not scope._abandoned:
            await scope.aclose()
