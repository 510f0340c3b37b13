"""A dict-backed cache (AutoGen's ``autogen.cache.in_memory_cache``)."""

from __future__ import annotations

from typing import Any

from .abstract_cache_base import ClosingCache

__all__ = ["InMemoryCache"]


class InMemoryCache(ClosingCache):
    """A cache that lives in this object only: nothing is pickled, shared or persisted.

    Keys are prefixed with ``"<seed>_"`` (no prefix for an empty seed), as in AutoGen. Values
    are stored as they are, so a mutable value changed after ``set`` changes in the cache too.
    A stored ``None`` reads back as ``default``. ``close`` keeps the entries.
    """

    def __init__(self, seed: str | int = "") -> None:
        self._seed = str(seed)
        self._prefix = f"{self._seed}_" if self._seed else ""
        self._entries: dict[str, Any] = {}

    @property
    def seed(self) -> str:
        """The seed, as a string."""
        return self._seed

    def get(self, key: str, default: Any = None) -> Any:
        value = self._entries.get(self._prefix + key)
        return default if value is None else value

    def set(self, key: str, value: Any) -> None:
        self._entries[self._prefix + key] = value

    def close(self) -> None:
        """Nothing to release; the entries stay available."""

    def __repr__(self) -> str:
        return f"InMemoryCache(seed={self._seed!r})"
