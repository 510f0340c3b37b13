"""Choose a cache backend from settings (AutoGen's ``autogen.cache.cache_factory``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .abstract_cache_base import AbstractCache

__all__ = ["CacheFactory"]

DEFAULT_CACHE_PATH_ROOT = ".cache"


class CacheFactory:
    """Namespace for :meth:`cache_factory`, kept as a class for AutoGen compatibility."""

    @staticmethod
    def cache_factory(
        seed: str | int,
        redis_url: str | None = None,
        cache_path_root: str | os.PathLike[str] | None = DEFAULT_CACHE_PATH_ROOT,
        cosmosdb_config: Mapping[str, Any] | None = None,
    ) -> AbstractCache:
        """The backend for these settings: Redis if ``redis_url`` is given, else a disk cache.

        The disk cache lives in ``<cache_path_root>/<seed>`` relative to the current
        directory; ``cache_path_root=None`` means the default, ``.cache``. As in AutoGen, the
        seed is joined onto the root as a path: ``Cache.disk("/tmp/x")`` is the directory
        ``/tmp/x``, ``Cache.disk("a/b")`` is ``.cache/a/b``. Unlike AutoGen, a
        missing redis package is an ``ImportError`` (not a silent switch to disk), and a Cosmos
        DB config raises ``NotImplementedError``.
        """
        # The backends are imported here: a program that never makes a cache never pays for them.
        seed = check_seed(seed)
        if redis_url:
            from .redis_cache import RedisCache

            return RedisCache(seed, redis_url)
        if cosmosdb_config:
            raise NotImplementedError(
                "Cosmos DB caches are not supported by parley; use Cache.disk() or Cache.redis()"
            )
        root = DEFAULT_CACHE_PATH_ROOT if cache_path_root is None else cache_path_root
        if not isinstance(root, (str, os.PathLike)):
            raise TypeError(f"cache_path_root must be a path, got {type(root).__name__}")
        from .disk_cache import DiskCache

        return DiskCache(os.path.join(".", os.fspath(root), _directory_name(seed)))


def check_seed(seed: object) -> str:
    """``seed`` as the string used in keys and paths; rejects what cannot be a seed."""
    if seed is None:
        raise ValueError(
            "cache_seed must be a str or int, not None; to turn caching off, pass no cache"
        )
    if not isinstance(seed, (str, int)):
        raise TypeError(f"cache_seed must be a str or int, got {type(seed).__name__}")
    return str(seed)


def _directory_name(seed: str) -> str:
    # The seed is the caller's own choice of directory (AutoGen's tests pass a temporary
    # directory as the seed), like the root; only a name no file system accepts is refused here,
    # with the seed named.
    if "\0" in seed:
        raise ValueError(f"cache_seed {seed!r} cannot name a cache directory: it holds a NUL byte")
    return seed
