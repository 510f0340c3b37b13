"""The ``with`` block of objects that hold a resource: one ``__enter__``/``__exit__`` pair for
every server, store and executor of parley instead of one written in each class.

- :class:`StopsOnExit`: ``with obj:`` uses the object as it is and calls ``stop()`` at the end
  (executors, Jupyter servers, which start when made).
- :class:`ClosesOnExit`: the same with ``close()`` (stores, the web page's server).
- :class:`Serving`: ``with server:`` calls ``start()`` first, and ``stop()`` at the end.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["ClosesOnExit", "Serving", "StopsOnExit"]

_T = TypeVar("_T")
_ServingT = TypeVar("_ServingT", bound="Serving")


class StopsOnExit:
    """``with obj:`` calls ``obj.stop()`` when the block ends, however it ends."""

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self: _T) -> _T:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class ClosesOnExit:
    """``with obj:`` calls ``obj.close()`` when the block ends, however it ends."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _T) -> _T:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class Serving(StopsOnExit):
    """``with server:`` starts the server and stops it when the block ends."""

    def start(self: _ServingT) -> _ServingT:
        raise NotImplementedError

    def __enter__(self: _ServingT) -> _ServingT:
        return self.start()
