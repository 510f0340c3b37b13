"""A dict-backed cache (AutoGen's ``autogen.cache.in_memory_cache``)."""

from __future__ import annotations

import logging
from typing import Any

from . import _json_values
from .abstract_cache_base import ClosingCache

__all__ = ["InMemoryCache"]

logger = logging.getLogger(__name__)


class InMemoryCache(ClosingCache):
    """A cache that lives in this object only: nothing is pickled, shared or persisted.

    Keys are prefixed with ``"<seed>_"`` (no prefix for an empty seed), as in AutoGen. Values
    are stored as JSON text, like the disk and Redis caches (unlike AutoGen, which keeps the
    objects): ``set`` raises ``TypeError`` naming the type of a value that is not JSON data,
    and ``get`` returns a new decoded copy each time (tuples come back as lists), so changing a
    value after ``set`` or after ``get`` does not change the cache. A stored ``None`` reads back
    as ``default``. ``close`` keeps the entries.

    AutoGen's attribute names are kept for compatibility, as code reads them to see what was
    cached: ``_seed`` (the seed as a str), ``_cache`` (the plain dict of entries, by prefixed
    key; here its values are parley's JSON text) and ``_prefixed_key(key)``.
    """

    def __init__(self, seed: str | int = "") -> None:
        self._seed = str(seed)
        self._prefix = f"{self._seed}_" if self._seed else ""
        self._cache: dict[str, str] = {}

    @property
    def seed(self) -> str:
        """The seed, as a string."""
        return self._seed

    def get(self, key: str, default: Any = None) -> Any:
        """The value stored under ``key``, or ``default`` (also, with a warning, for an entry
        parley did not write: something put in ``_cache`` directly, as the other backends)."""
        text = self._cache.get(self._prefixed_key(key))
        if text is None:
            return default
        value = _json_values.read(text, None, logger, repr(self), key)
        return default if value is None else value

    def set(self, key: str, value: Any) -> None:
        self._cache[self._prefixed_key(key)] = _json_values.dumps(value, "InMemoryCache")

    def _prefixed_key(self, key: str) -> str:
        """The dict key of ``key``: ``"<seed>_<key>"``, or ``key`` for an empty seed."""
        return self._prefix + key

    def close(self) -> None:
        """Nothing to release; the entries stay available."""

    def __repr__(self) -> str:
        return f"InMemoryCache(seed={self._seed!r})"
