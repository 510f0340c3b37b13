"""A dict-backed cache (AutoGen's ``autogen.cache.in_memory_cache``)."""

from __future__ import annotations

from typing import Any

from . import _json_values
from .abstract_cache_base import ClosingCache

__all__ = ["InMemoryCache"]


class InMemoryCache(ClosingCache):
    """A cache that lives in this object only: nothing is pickled, shared or persisted.

    Keys are prefixed with ``"<seed>_"`` (no prefix for an empty seed), as in AutoGen. Values
    are stored as JSON text, like the disk and Redis caches (unlike AutoGen, which keeps the
    objects): ``set`` raises ``TypeError`` naming the type of a value that is not JSON data,
    and ``get`` returns a new decoded copy each time (tuples come back as lists), so changing a
    value after ``set`` or after ``get`` does not change the cache. A stored ``None`` reads back
    as ``default``. ``close`` keeps the entries.
    """

    def __init__(self, seed: str | int = "") -> None:
        self._seed = str(seed)
        self._prefix = f"{self._seed}_" if self._seed else ""
        self._entries: dict[str, str] = {}

    @property
    def seed(self) -> str:
        """The seed, as a string."""
        return self._seed

    def get(self, key: str, default: Any = None) -> Any:
        text = self._entries.get(self._prefix + key)
        value = None if text is None else _json_values.loads(text)
        return default if value is None else value

    def set(self, key: str, value: Any) -> None:
        self._entries[self._prefix + key] = _json_values.dumps(value, "InMemoryCache")

    def close(self) -> None:
        """Nothing to release; the entries stay available."""

    def __repr__(self) -> str:
        return f"InMemoryCache(seed={self._seed!r})"
