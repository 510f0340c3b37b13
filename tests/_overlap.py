"""Proof that requests overlapped, without a stopwatch: a fake model that answers nobody until
``count`` requests are in flight together.

Set an :class:`AllInFlight` as ``FakeLLMServer.responder``. It runs on the server's loop: each
request waits there until ``count`` have arrived, then all are answered (and every later one
at once). A client that queued its calls never has them all in flight, so its first request
waits out ``timeout`` and is answered with a 500 naming the shortfall: the test fails within
the bound, whatever the machine's load, instead of hanging or depending on how fast it is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

__all__ = ["OVERLAP_TIMEOUT", "AllInFlight"]

# How long a request waits for the others: far above any load's delay, far below the run's.
OVERLAP_TIMEOUT = 60.0


class AllInFlight:
    """A responder answering ``answer(body)`` once ``count`` requests have been in flight
    together (see the module docstring)."""

    def __init__(
        self, count: int, answer: Callable[[dict[str, Any]], Any], timeout: float = OVERLAP_TIMEOUT
    ) -> None:
        self._count, self._answer, self._timeout = count, answer, timeout
        self._arrived = 0
        self._all_in = asyncio.Event()  # bound to the server's loop on first use

    async def __call__(self, body: dict[str, Any]) -> Any:
        self._arrived += 1
        if self._arrived >= self._count:
            self._all_in.set()
        try:
            await asyncio.wait_for(self._all_in.wait(), self._timeout)
        except TimeoutError:
            raise TimeoutError(
                f"only {self._arrived} of {self._count} requests were in flight together after "
                f"{self._timeout} s: the calls queued instead of overlapping"
            ) from None
        return self._answer(body)
