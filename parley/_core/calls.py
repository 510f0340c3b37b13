"""Calling user code from parley's async core, whatever its kind.

A user's callback (reply function, hook, tool, human-input override) may be a plain function
or a coroutine function. Coroutine functions are awaited on the loop. Plain ones run in a worker
thread (carrying the caller's context variables), so a slow or blocking callback — one that
calls a sync parley API such as ``initiate_chat``, say — never stalls the event loop that every
other chat and request shares. The worker runs under :func:`parley._core.runtime.run_in_thread`, so
cancelling the chat cancels what the callback started through parley (a nested sync chat) and
waits for it to stop.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from .runtime import to_thread

__all__ = ["call_user", "is_async_callable"]


def is_async_callable(fn: Any) -> bool:
    """True for coroutine functions, also behind functools.partial and callable objects."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - an object with an async __call__
    return call is not None and inspect.iscoroutinefunction(call)


async def call_user(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Await ``fn(*args, **kwargs)``: directly if async, in a worker thread if not."""
    if is_async_callable(fn):
        return await fn(*args, **kwargs)
    # to_thread, not run_in_thread: a cancelled chat returns at once, without waiting for a
    # callback that may never look at its token (the token still stops a nested sync chat).
    result = await to_thread(fn, *args, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result
