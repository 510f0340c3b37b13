"""Response caches (AutoGen's ``autogen.cache``).

``Cache.disk()``, ``Cache.redis()`` and ``Cache.in_memory()`` make caches to pass as
``cache=`` to ``initiate_chat`` or ``OpenAIWrapper.create``; any object satisfying
:class:`AbstractCache` works too. Each name is imported on first access, and each backend
imports its library (diskcache, redis) only when one is created: importing this package costs
next to nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = ["AbstractCache", "Cache", "CacheFactory", "DiskCache", "InMemoryCache", "RedisCache"]

if TYPE_CHECKING:
    from .abstract_cache_base import AbstractCache
    from .cache import Cache
    from .cache_factory import CacheFactory
    from .disk_cache import DiskCache
    from .in_memory_cache import InMemoryCache
    from .redis_cache import RedisCache
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "AbstractCache": ".abstract_cache_base",
            "Cache": ".cache",
            "CacheFactory": ".cache_factory",
            "DiskCache": ".disk_cache",
            "InMemoryCache": ".in_memory_cache",
            "RedisCache": ".redis_cache",
        },
    )
