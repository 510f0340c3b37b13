"""A dict-backed cache (AutoGen's ``autogen.cache.in_memory_cache``)."""

from __future__ import annotations

from typing import Any

from .abstract_cache_base import ClosingCache

__all__ = ["InMemoryCache"]


class InMemoryCache(ClosingCache):
    """A cache that lives in this object only: nothing is pickled, shared or persisted.

    As in AutoGen: keys are prefixed with ``"<seed>_"`` (no prefix for an empty seed); values
    are kept as they are, any Python object, so ``get`` returns the very object ``set`` stored
    (a tuple stays a tuple); a stored ``None`` reads back as ``default``; ``close`` keeps the
    entries. (Unlike the disk and Redis caches, nothing here is read back from a place others
    can write, so there is no reason to hold values as JSON text.)

    AutoGen's attribute names are kept, as code reads them to see what was cached: ``_seed``
    (the seed as a str), ``_cache`` (the plain dict of entries, by prefixed key) and
    ``_prefixed_key(key)``.
    """

    def __init__(self, seed: str | int = "") -> None:
        self._seed = str(seed)
        self._cache: dict[str, Any] = {}

    @property
    def seed(self) -> str:
        """The seed, as a string."""
        return self._seed

    def get(self, key: str, default: Any = None) -> Any:
        """The value stored under ``key``, or ``default`` (also for a stored ``None``)."""
        value = self._cache.get(self._prefixed_key(key))
        return default if value is None else value

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``, as it is."""
        self._cache[self._prefixed_key(key)] = value

    def _prefixed_key(self, key: str) -> str:
        """The dict key of ``key``: ``"<seed>_<key>"``, or ``key`` for an empty seed."""
        return f"{self._seed}_{key}" if self._seed else key

    def close(self) -> None:
        """Nothing to release; the entries stay available."""

    def __repr__(self) -> str:
        return f"InMemoryCache(seed={self._seed!r})"
