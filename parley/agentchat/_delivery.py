"""Message delivery without recursion, and dispatch to user overrides of sync methods.

AutoGen's conversation is recursive (send -> receive -> send ...), one stack level per message,
so a long chat can hit the recursion limit. Here a reply produced inside ``a_receive`` is queued
for the *driver* — the outermost ``a_send`` of this exchange, which loops until the queue is
empty. ``await a.a_send(msg, b)`` still returns only when the exchange is over, as in AutoGen.

Reply functions and hooks run with no driver in their context, so a chat started from inside
one (a nested chat, a sync ``initiate_chat`` in a callback) is driven on its own and completes
before the callback returns.

A user subclass may override a sync method (``receive``, ``send``, ``generate_reply``) and not
its async twin; the async core then calls the override, in a worker thread.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from .._calls import overrides

__all__ = ["dispatch", "no_driver", "send_reply"]

_Pending = tuple[Any, Any, Any, Any]  # (agent, message, recipient, silent)
_driver: contextvars.ContextVar[deque[_Pending] | None] = contextvars.ContextVar(
    "parley_driver", default=None
)


async def send_reply(agent: Any, message: Any, recipient: Any, silent: Any) -> None:
    """Send ``message`` from ``agent`` as a reply: queued if an exchange is being driven, else
    driven here until the exchange ends."""
    queue = _driver.get()
    if queue is not None:
        queue.append((agent, message, recipient, silent))
        return
    queue = deque([(agent, message, recipient, silent)])
    token = _driver.set(queue)
    try:
        while queue:
            sender, msg, to, quiet = queue.popleft()
            await dispatch(sender, "send", msg, to, silent=quiet)
    finally:
        _driver.reset(token)


class no_driver:
    """Run user callbacks outside the current exchange (see the module docstring)."""

    def __enter__(self) -> None:
        self._token = _driver.set(None)

    def __exit__(self, *exc: object) -> None:
        _driver.reset(self._token)


def _base() -> type:
    from .conversable_agent import ConversableAgent

    return ConversableAgent


async def dispatch(obj: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """Call ``obj.a_<name>``, or ``obj.<name>`` in a worker thread when only the sync method
    is overridden (or the object has no async twin)."""
    base = _base()
    sync_method: Callable[..., Any] | None = getattr(obj, name, None)
    async_method: Callable[..., Awaitable[Any]] | None = getattr(obj, "a_" + name, None)
    if isinstance(obj, base):
        use_sync = overrides(obj, name, base) and not overrides(obj, "a_" + name, base)
    else:
        use_sync = async_method is None or not asyncio.iscoroutinefunction(async_method)
    if use_sync:
        assert sync_method is not None, f"{obj!r} has neither {name} nor a_{name}"
        return await asyncio.to_thread(sync_method, *args, **kwargs)
    assert async_method is not None
    return await async_method(*args, **kwargs)
