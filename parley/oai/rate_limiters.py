"""Rate limiters (AutoGen's ``autogen.oai.rate_limiters``).

A config entry's ``api_rate_limit`` (requests per second) gets a :class:`TimeRateLimiter`;
the wrapper waits on it before each request (once per request, not per retry). The same
limiter serves sync code (:meth:`TimeRateLimiter.sleep` blocks the thread) and the async
request path (:meth:`TimeRateLimiter.a_sleep` yields to the event loop), so both share one
schedule.

Difference from AutoGen, on purpose: each call reserves the next free slot of the schedule
before it waits, so callers in several threads or tasks are spaced ``1 / rate`` apart (AutoGen
compared with the last call's time, and concurrent callers could all go at once).
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from typing import Any, Protocol

__all__ = ["RateLimiter", "TimeRateLimiter"]


class RateLimiter(Protocol):
    """Something that makes its caller wait until it may go on."""

    def sleep(self, *args: Any, **kwargs: Any) -> None:
        """Block until the next call is allowed."""
        ...


class TimeRateLimiter:
    """At most ``rate`` calls per second; the first call does not wait."""

    def __init__(self, rate: float) -> None:
        if isinstance(rate, bool) or not (
            isinstance(rate, (int, float)) and rate > 0 and math.isfinite(rate)
        ):
            raise ValueError(f"rate must be a positive number of calls per second, got {rate!r}")
        self._interval = 1.0 / rate
        self._next = -math.inf  # when the next call may start (time.monotonic)
        self._lock = threading.Lock()

    def delay(self, now: float) -> float:
        """Reserve the next slot for a call made at ``now``; the seconds it must wait.

        The timing itself, without waiting: ``sleep``, ``a_sleep`` and tests (with their own
        clock) share it.
        """
        with self._lock:
            start = max(now, self._next)
            self._next = start + self._interval
        return start - now

    def sleep(self, *args: Any, **kwargs: Any) -> None:
        """Block the calling thread until the call is allowed (arguments are ignored)."""
        wait = self.delay(time.monotonic())
        if wait > 0:
            time.sleep(wait)

    async def a_sleep(self) -> None:
        """Wait, without blocking the event loop, until the call is allowed."""
        wait = self.delay(time.monotonic())
        if wait > 0:
            await asyncio.sleep(wait)
