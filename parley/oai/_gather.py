"""Many requests at once: at most ``limit`` in flight, results in the order of the items.

When one fails, the others are cancelled and awaited rather than left running behind the error
(a plain ``asyncio.gather`` would let them finish, and pay for them, unobserved).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

__all__ = ["gather_bounded"]

T = TypeVar("T")
R = TypeVar("R")


async def gather_bounded(
    call: Callable[[T], Awaitable[R]], items: Sequence[T], limit: int
) -> list[R]:
    """``[await call(item) for item in items]``, run concurrently, ``limit`` at a time."""
    if limit < 1:
        raise ValueError(f"max_concurrency must be at least 1, got {limit}")
    gate = asyncio.Semaphore(limit)

    async def one(item: T) -> R:
        async with gate:
            return await call(item)

    tasks = [asyncio.ensure_future(one(item)) for item in items]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
