"""The sync face of the agents: ``run_sync`` marks the work as a sync chat, and each built-in
reply gets its public sync method and async twin from one implementation."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from .._sync import run_sync as _run_sync

__all__ = ["in_sync_chat", "reply_twins", "run_sync"]

T = TypeVar("T")
_in_sync_chat: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "parley_sync_chat", default=False
)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a step from the sync API, marking the work as a sync chat: reply functions registered
    with ``ignore_async_in_sync_chat=True`` are then skipped, as their owners asked."""
    token = _in_sync_chat.set(True)
    try:
        return _run_sync(coro)
    finally:
        _in_sync_chat.reset(token)


def reply_twins(impl: Callable[..., Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """A built-in reply's public sync method and its async twin, both over ``impl``."""

    def sync(self: Any, messages: Any = None, sender: Any = None, config: Any = None) -> Any:
        return run_sync(impl(self, messages, sender, config))

    async def a_sync(
        self: Any, messages: Any = None, sender: Any = None, config: Any = None
    ) -> Any:
        return await impl(self, messages, sender, config)

    for fn, name in ((sync, impl.__name__), (a_sync, "a_" + impl.__name__)):
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = impl.__doc__
    return sync, a_sync


def in_sync_chat() -> bool:
    """Whether the current work was started through the sync API."""
    return _in_sync_chat.get()
