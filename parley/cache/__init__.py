"""Response caches (AutoGen's ``autogen.cache``).

``Cache.disk()``, ``Cache.redis()`` and ``Cache.in_memory()`` make caches to pass as
``cache=`` to ``initiate_chat`` or ``OpenAIWrapper.create``; any object satisfying
:class:`AbstractCache` works too. Importing this package does not import diskcache or redis:
each backend imports its library when it is created.
"""

from __future__ import annotations

from .abstract_cache_base import AbstractCache
from .cache import Cache
from .cache_factory import CacheFactory
from .disk_cache import DiskCache
from .in_memory_cache import InMemoryCache
from .redis_cache import RedisCache

__all__ = ["AbstractCache", "Cache", "CacheFactory", "DiskCache", "InMemoryCache", "RedisCache"]
