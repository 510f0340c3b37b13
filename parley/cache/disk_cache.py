"""A cache in a directory on disk (AutoGen's ``autogen.cache.disk_cache``), over ``diskcache``.

Entries survive restarts and can be shared by many processes at once: ``diskcache`` keeps
them in SQLite (WAL mode), and this module waits out the moments when another process holds
the write lock instead of failing with "database is locked".
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from .abstract_cache_base import ClosingCache

__all__ = ["DiskCache"]

_T = TypeVar("_T")

# SQLite's own busy wait per statement. Writes hold the lock for milliseconds, so this only
# matters when a process stalls while holding it.
_SQLITE_TIMEOUT = 15.0
# SQLite answers SQLITE_BUSY without waiting in a few cases (WAL recovery, schema changes
# while the database is first created by several processes), so whole operations are retried
# too, up to this long in total.
_RETRY_FOR = 60.0
_MAX_PAUSE = 0.05


class DiskCache(ClosingCache):
    """A persistent cache in the directory ``seed`` (created if missing).

    ``seed`` is the directory path, as in AutoGen: ``Cache.disk(cache_seed=7)`` passes
    ``./.cache/7``. Values are pickled (small ones inline in SQLite, big ones in files next to
    it), so anything picklable can be stored. The directory format is ``diskcache``'s, so
    caches written by AutoGen can be read and vice versa.

    ``close`` releases the database connection; the next ``get`` or ``set`` opens a new one.
    Calls from threads other than the one that made the cache (``asyncio.to_thread``, thread
    pools) close their connection when they finish, so no connection outlives ``close``.
    """

    def __init__(self, seed: str | int | os.PathLike[str]) -> None:
        # diskcache is imported here, not at module level, to keep `import parley` light.
        import diskcache

        directory = str(seed) if isinstance(seed, int) else os.fspath(seed)
        if not directory:
            raise ValueError("DiskCache needs a directory, got an empty path")
        if os.path.exists(directory) and not os.path.isdir(directory):
            raise NotADirectoryError(f"disk cache directory {directory!r} is not a directory")
        self._directory = directory
        self._home_thread = threading.get_ident()
        self._timeout_error: type[Exception] = diskcache.Timeout
        self._retryable: tuple[type[Exception], ...] = (sqlite3.OperationalError, diskcache.Timeout)
        self.cache: Any = self._retry(lambda: _open(diskcache.Cache, directory))

    @property
    def directory(self) -> str:
        """The directory holding the entries."""
        return self._directory

    def get(self, key: str, default: Any = None) -> Any:
        """The value stored under ``key``, or ``default``."""
        return self._run(lambda: self.cache.get(key, default))

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (pickled) under ``key``."""
        self._run(lambda: self.cache.set(key, value))

    def close(self) -> None:
        """Close this thread's database connection; safe to call more than once."""
        self.cache.close()

    def __repr__(self) -> str:
        return f"DiskCache({self._directory!r})"

    def _run(self, operation: Callable[[], _T]) -> _T:
        try:
            return self._retry(operation)
        finally:
            if threading.get_ident() != self._home_thread:
                # diskcache keeps one connection per thread and its close() reaches only the
                # calling thread's, so one left open in a worker thread would outlive ours.
                self.cache.close()

    def _retry(self, operation: Callable[[], _T]) -> _T:
        deadline = time.monotonic() + _RETRY_FOR
        pause = 0.001
        while True:
            try:
                return operation()
            except self._retryable as exc:
                if not _is_lock_contention(exc, self._timeout_error):
                    raise
                if time.monotonic() >= deadline:
                    raise TimeoutError(
                        f"the disk cache in {self._directory!r} stayed locked by other "
                        f"processes for more than {_RETRY_FOR:g} s"
                    ) from exc
            time.sleep(pause)
            pause = min(pause * 2, _MAX_PAUSE)


def _is_lock_contention(exc: Exception, timeout_error: type[Exception]) -> bool:
    if isinstance(exc, timeout_error):
        return True
    message = str(exc).lower()
    return "locked" in message or "busy" in message


def _open(cache_class: Any, directory: str) -> Any:
    # Constructed in two steps so that a failed (and retried) initialisation closes the
    # connection it opened instead of leaving it to the garbage collector.
    cache = cache_class.__new__(cache_class)
    try:
        cache.__init__(directory, timeout=_SQLITE_TIMEOUT)
    except BaseException:
        try:
            cache.close()
        except Exception:
            pass  # the original error is the one worth reporting
        raise
    return cache
