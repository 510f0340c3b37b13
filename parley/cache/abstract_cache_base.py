"""The cache protocol (AutoGen's ``autogen.cache.abstract_cache_base``).

Any object with these five members can be passed as ``cache=`` to ``initiate_chat`` or
``OpenAIWrapper.create``; it does not have to inherit from anything.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Protocol, TypeVar, runtime_checkable

from .._core.lifetime import ClosesOnExit

__all__ = ["AbstractCache", "ClosingCache"]

# typing.Self is 3.11+; a self-bound TypeVar says the same on 3.10.
_CacheT = TypeVar("_CacheT", bound="AbstractCache")


@runtime_checkable
class AbstractCache(Protocol):
    """A key/value store for model responses, usable as a context manager.

    ``isinstance(obj, AbstractCache)`` is true for any object that has ``get``, ``set``,
    ``close``, ``__enter__`` and ``__exit__`` (only their presence is checked at run time).
    """

    def get(self, key: str, default: Any = None) -> Any:
        """The value stored under ``key``, or ``default`` if there is none."""
        ...

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``, replacing any previous value."""
        ...

    def close(self) -> None:
        """Release the resources held; a closed cache may be used again."""
        ...

    def __enter__(self: _CacheT) -> _CacheT: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Close the cache."""
        ...


class ClosingCache(ClosesOnExit):
    """Base of parley's backends: a context manager that gives itself and closes on exit."""

    def close(self) -> None:
        raise NotImplementedError
