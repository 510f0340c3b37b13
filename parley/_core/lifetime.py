"""The ``with`` block of objects that hold a resource: one ``__enter__``/``__exit__`` pair for
every server, store, cache and executor of parley instead of one written in each class.

- :class:`StopsOnExit`: ``with obj:`` uses the object as it is and calls ``stop()`` at the end
  (executors, Jupyter servers, which start when made).
- :class:`ClosesOnExit`: the same with ``close()`` (stores, caches, the web page's server).
- :class:`AsyncClosesOnExit`: ``async with obj:`` awaits ``obj.aclose()`` at the end (MCP toolkits).
- :class:`Serving`: ``with server:`` calls ``start()`` first, and ``stop()`` at the end.
- :class:`Bound`: ``with Bound(var, value):`` the context variable ``var`` is ``value`` inside
  the block. A class, not a generator: the core enters one on every turn.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import ClassVar, Generic, TypeVar

__all__ = ["AsyncClosesOnExit", "Bound", "ClosesOnExit", "Serving", "StopsOnExit"]

_T = TypeVar("_T")
_ServingT = TypeVar("_ServingT", bound="Serving")


class _ReleasedOnExit:
    # The name of the method that releases the resource: the classes below differ only in it.
    _RELEASE: ClassVar[str]

    def __enter__(self: _T) -> _T:
        return self

    def __exit__(self, *exc_info: object) -> None:
        getattr(self, self._RELEASE)()


class StopsOnExit(_ReleasedOnExit):
    """``with obj:`` calls ``obj.stop()`` when the block ends, however it ends."""

    _RELEASE = "stop"


class ClosesOnExit(_ReleasedOnExit):
    """``with obj:`` calls ``obj.close()`` when the block ends, however it ends."""

    _RELEASE = "close"


class AsyncClosesOnExit:
    """``async with obj:`` awaits ``obj.aclose()`` when the block ends, however it ends."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self: _T) -> _T:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class Serving(StopsOnExit):
    """``with server:`` starts the server and stops it when the block ends."""

    def start(self: _ServingT) -> _ServingT:
        raise NotImplementedError

    def __enter__(self: _ServingT) -> _ServingT:
        return self.start()


class Bound(Generic[_T]):
    """``with Bound(var, value):`` sets the context variable ``var`` to ``value`` for the block
    and resets it afterwards, however the block ends."""

    __slots__ = ("_token", "_value", "_var")

    def __init__(self, var: ContextVar[_T], value: _T) -> None:
        self._var, self._value = var, value

    def __enter__(self) -> None:
        self._token: Token[_T] = self._var.set(self._value)

    def __exit__(self, *exc_info: object) -> None:
        self._var.reset(self._token)
