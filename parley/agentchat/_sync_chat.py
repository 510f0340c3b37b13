"""The sync face of the agents.

Every step is written once, as a coroutine method ``a_<name>``; its sync method is
``sync_face(a_<name>)``, which runs ``self.a_<name>(...)`` through :func:`run_sync` (on parley's
background loop, so it also works inside a running loop, as in Jupyter). The async method is
looked up on the instance, so a subclass that overrides only ``a_<name>`` changes both forms.

:func:`run_sync` also marks the work as a sync chat: reply functions registered with
``ignore_async_in_sync_chat=True`` are then skipped, as their owners asked.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from .._core.runtime import run_sync as _run_sync
from .._core.runtime import start_sync as _start_sync
from .._core.runtime import sync_face as _sync_face

__all__ = ["in_sync_chat", "run_sync", "start_sync", "sync_face", "sync_of"]

T = TypeVar("T")
P = ParamSpec("P")
_in_sync_chat: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "parley_sync_chat", default=False
)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a step from the sync API, marking the work as a sync chat."""
    token = _in_sync_chat.set(True)
    try:
        return _run_sync(coro)
    finally:
        _in_sync_chat.reset(token)


def start_sync(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Start a step from the sync API without waiting for it (a sync chat too)."""
    token = _in_sync_chat.set(True)
    try:
        return _start_sync(coro)
    finally:
        _in_sync_chat.reset(token)


def in_sync_chat() -> bool:
    """Whether the current work was started through the sync API."""
    return _in_sync_chat.get()


def sync_face(method: Callable[..., Coroutine[Any, Any, T]]) -> Callable[..., T]:
    """The sync method of the async method ``a_<name>``: named ``<name>``, same signature
    (:func:`parley._core.runtime.sync_face`, run as a sync chat)."""
    return _sync_face(method, run_sync)


def sync_of(fn: Callable[P, Coroutine[Any, Any, T]], name: str | None = None) -> Callable[P, T]:
    """The blocking form of the coroutine function ``fn`` (same parameters), named ``name``
    if given."""

    @functools.wraps(fn)
    def sync(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(fn(*args, **kwargs))

    if name is not None:
        sync.__name__ = sync.__qualname__ = name
        sync.__doc__ = f"The sync face of :func:`{fn.__name__}` (same arguments, same result)."
    return sync
