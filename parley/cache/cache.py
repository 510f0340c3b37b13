"""The user-facing cache (AutoGen's ``autogen.Cache``): settings in, a backend out."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar

from .abstract_cache_base import AbstractCache, ClosingCache
from .cache_factory import DEFAULT_CACHE_PATH_ROOT, CacheFactory, check_seed
from .in_memory_cache import InMemoryCache

__all__ = ["Cache"]


class Cache(ClosingCache):
    """A response cache chosen from ``config``; pass it as ``cache=`` to chats and clients.

    ``config`` may hold ``cache_seed`` (default 42, stored as a string), ``redis_url``,
    ``cache_path_root`` (default ``.cache``) and ``cosmos_db_config``. The dict is copied,
    never changed. The backend is ``RedisCache`` if ``redis_url`` is set, else a
    ``DiskCache`` in ``<cache_path_root>/<cache_seed>``.

    Every backend stores values as JSON text and never unpickles: ``set`` takes JSON data only
    (the completion client stores its responses as tagged JSON documents), and an entry parley
    did not write, AutoGen's pickles included, reads as a miss.

    ``cache`` (the backend) and ``config`` are AutoGen's public attributes. As in AutoGen,
    ``with Cache.disk() as cache:`` binds the **backend** (a ``DiskCache``, ``RedisCache`` or
    ``InMemoryCache``), so code written for AutoGen finds the backend's own attributes
    (``cache.cache.clear()``); leaving the block closes it, and a closed cache reopens on its
    next use.
    """

    ALLOWED_CONFIG_KEYS: ClassVar[list[str]] = [
        "cache_seed",
        "redis_url",
        "cache_path_root",
        "cosmos_db_config",
    ]

    config: dict[str, Any]
    cache: AbstractCache

    def __init__(self, config: Mapping[str, Any]) -> None:
        if not isinstance(config, Mapping):
            raise TypeError(f"Cache config must be a dict, got {type(config).__name__}")
        for key in config:
            if key not in self.ALLOWED_CONFIG_KEYS:
                raise ValueError(
                    f"Invalid config key: {key} (allowed: {', '.join(self.ALLOWED_CONFIG_KEYS)})"
                )
        self.config = dict(config)
        self.config["cache_seed"] = check_seed(self.config.get("cache_seed", 42))
        self.cache = CacheFactory.cache_factory(
            seed=self.config["cache_seed"],
            redis_url=self.config.get("redis_url"),
            cache_path_root=self.config.get("cache_path_root"),
            cosmosdb_config=self.config.get("cosmos_db_config"),
        )

    @staticmethod
    def disk(
        cache_seed: str | int = 42,
        cache_path_root: str | os.PathLike[str] = DEFAULT_CACHE_PATH_ROOT,
    ) -> Cache:
        """A disk cache in ``./<cache_path_root>/<cache_seed>``: the seed is joined onto the
        root as AutoGen joined them, so a seed that is an absolute path is the cache's directory
        itself (AutoGen's tests pass a temporary directory)."""
        return Cache({"cache_seed": cache_seed, "cache_path_root": cache_path_root})

    @staticmethod
    def redis(cache_seed: str | int = 42, redis_url: str = "redis://localhost:6379/0") -> Cache:
        """A Redis cache; keys are ``autogen:<cache_seed>:<key>``, values JSON text (never
        pickles: see :class:`RedisCache`)."""
        return Cache({"cache_seed": cache_seed, "redis_url": redis_url})

    @staticmethod
    def cosmos_db(
        connection_string: str | None = None,
        container_id: str | None = None,
        cache_seed: str | int = 42,
        client: Any = None,
    ) -> Cache:
        """Not supported by parley: always raises ``NotImplementedError``."""
        raise NotImplementedError(
            "Cosmos DB caches are not supported by parley; use Cache.disk() or Cache.redis()"
        )

    @staticmethod
    def in_memory(cache_seed: str | int = 42) -> Cache:
        """A cache held in this process only (a parley extension; not in AutoGen 0.2).

        Each call makes a new, empty store: two in-memory caches never share entries.
        ``config`` holds just the seed.
        """
        seed = check_seed(cache_seed)
        cache = Cache.__new__(Cache)
        cache.config = {"cache_seed": seed}
        cache.cache = InMemoryCache(seed)
        return cache

    def get(self, key: str, default: Any = None) -> Any:
        """The value stored under ``key``, or ``default``."""
        return self.cache.get(key, default)

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``."""
        self.cache.set(key, value)

    def close(self) -> None:
        """Release the backend's resources; the cache reopens on its next use."""
        self.cache.close()

    def __enter__(self) -> Any:
        """What the backend's ``__enter__`` gives (the backend itself, for parley's), as
        AutoGen's ``Cache.__enter__`` returns."""
        return self.cache.__enter__()

    def __exit__(self, *exc_info: object) -> None:
        """The backend's ``__exit__`` (parley's close the backend), as in AutoGen."""
        self.cache.__exit__(*exc_info)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        # The config is left out: a redis_url may carry a password.
        return f"Cache({self.cache!r})"
