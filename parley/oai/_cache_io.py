"""Cache lookups for the completion client, off the event loop and without reopening files.

Cache backends block (SQLite files, Redis sockets), so every get and set runs on one dedicated
thread. A disk cache that ``cache_seed`` selects is opened once per process, on that thread, and
kept open (closed at exit): reopening it for every lookup, as AutoGen does, cost milliseconds a
call. A cache object the caller passes stays theirs to open and close.

Keys are the SHA-256 of :func:`parley.oai.openai_utils.get_key`: short, fixed-size, and still
covering every request field that shapes the reply (and none of the credentials).
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import os
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["cache_get", "cache_key", "cache_set", "seed_cache"]

T = TypeVar("T")
_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_pid: int | None = None
_seed_caches: dict[str, Any] = {}


def _cache_thread() -> ThreadPoolExecutor:
    global _executor, _pid
    with _lock:
        if _executor is None or _pid != os.getpid():
            _executor = ThreadPoolExecutor(1, thread_name_prefix="parley-cache")
            _pid = os.getpid()
            _seed_caches.clear()
        return _executor


async def _on_cache_thread(fn: Callable[..., T], *args: Any) -> T:
    return await asyncio.get_running_loop().run_in_executor(_cache_thread(), fn, *args)


def cache_key(params: Mapping[str, Any]) -> str:
    from .openai_utils import get_key

    return hashlib.sha256(get_key(params).encode()).hexdigest()


async def seed_cache(seed: Any, root: str) -> Any:
    """The process-wide disk cache for ``cache_seed`` under ``root`` (opened on first use)."""

    def open_cache() -> Any:
        path = os.path.abspath(os.path.join(root, str(seed)))
        cache = _seed_caches.get(path)
        if cache is None:
            from ..cache import Cache

            cache = _seed_caches[path] = Cache.disk(seed, root)
        return cache

    return await _on_cache_thread(open_cache)


async def cache_get(cache: Any, key: str) -> Any:
    return await _on_cache_thread(cache.get, key, None)


async def cache_set(cache: Any, key: str, value: Any) -> None:
    await _on_cache_thread(cache.set, key, value)


@atexit.register
def _close_seed_caches() -> None:
    if _executor is None or _pid != os.getpid():
        return
    caches = list(_seed_caches.values())
    _seed_caches.clear()
    for cache in caches:
        try:
            _executor.submit(cache.close).result(timeout=5)
        except Exception:  # the process is ending; nothing to report to
            pass
