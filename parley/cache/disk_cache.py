"""A cache in a directory on disk (AutoGen's ``autogen.cache.disk_cache``), over ``diskcache``.

Entries survive restarts and can be shared by many processes at once: ``diskcache`` keeps
them in SQLite (WAL mode), and this module waits out the moments when another process holds
the write lock instead of failing with "database is locked".

Values are JSON text, and diskcache runs with :mod:`parley.cache._safe_diskcache`'s ``Disk`` and
settings, so nothing written into the directory by someone else is ever unpickled or obeyed.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from .._protected_paths import protect
from . import _json_values
from .abstract_cache_base import ClosingCache

__all__ = ["DiskCache"]

logger = logging.getLogger(__name__)
_MISSING = object()

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
    ``./.cache/7``. Values must be JSON data (``set`` raises ``TypeError`` naming the type of
    anything else) and are stored as JSON text, small ones inline in SQLite, big ones in files
    next to it; ``get`` returns the decoded JSON (tuples come back as lists). Nothing is ever
    unpickled: an entry parley did not write (a pickle, such as AutoGen's entries, text that is
    not JSON, a value file outside the directory) is a miss, with a logged warning, and the
    directory's own settings table is not obeyed. The directory format is ``diskcache``'s, so
    diskcache can open it, but AutoGen and parley cannot read each other's entries.

    The class is looked up as ``diskcache.Cache`` when the cache is created, through this
    module's ``diskcache`` attribute (AutoGen's import, which code patches:
    ``mock.patch("autogen.cache.disk_cache.diskcache.Cache")``); diskcache's own class is
    replaced by parley's safe subclass, and anything else put there is called as AutoGen calls
    it, ``Cache(directory)``.

    ``cache`` is the ``diskcache.Cache`` underneath (AutoGen's attribute, kept for
    compatibility: code calls ``cache.clear()`` or inspects entries), a subclass that keeps
    parley's safety rules: its values are parley's JSON text, and storing anything but text
    through it raises. It stays usable after ``close``.

    ``close`` releases the database connection; the next ``get`` or ``set`` opens a new one.
    Calls from threads other than the one that made the cache (``asyncio.to_thread``, thread
    pools) close their connection when they finish, so no connection outlives ``close``.
    """

    def __init__(self, seed: str | int | os.PathLike[str]) -> None:
        # diskcache is imported here, not at module level, to keep `import parley` light.
        import diskcache

        from ._safe_diskcache import SafeCache, stock_cache_class

        directory = str(seed) if isinstance(seed, int) else os.fspath(seed)
        if not directory:
            raise ValueError("DiskCache needs a directory, got an empty path")
        if os.path.exists(directory) and not os.path.isdir(directory):
            raise NotADirectoryError(f"disk cache directory {directory!r} is not a directory")
        self._directory = directory
        self._home_thread = threading.get_ident()
        self._timeout_error: type[Exception] = diskcache.Timeout
        self._retryable: tuple[type[Exception], ...] = (sqlite3.OperationalError, diskcache.Timeout)
        cache_class = diskcache.Cache
        if cache_class is stock_cache_class():
            self.cache: Any = self._retry(lambda: _open(SafeCache, directory))
        else:
            # diskcache.Cache was replaced, by a test double (mock.patch(
            # "autogen.cache.disk_cache.diskcache.Cache")) or a subclass: it is called as
            # AutoGen calls it. Values stay JSON text.
            self.cache = cache_class(directory)
        # Code executors refuse a work dir holding this directory: code that can write a
        # cache can choose the replies this process reads back.
        protect(directory, "a response cache")

    @property
    def directory(self) -> str:
        """The directory holding the entries."""
        return self._directory

    def get(self, key: str, default: Any = None) -> Any:
        """The value stored under ``key``, or ``default`` (also for an entry parley did not
        write, with a warning)."""
        where = f"disk cache {self._directory}"
        try:
            text = self._run(lambda: self.cache.get(key, _MISSING))
        except _json_values.ForeignEntry as refused:  # refused by the safe Disk itself
            _json_values.refuse(logger, where, key, refused)
            return default
        return default if text is _MISSING else _json_values.read(text, default, logger, where, key)

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (JSON data) under ``key``."""
        text = _json_values.dumps(value, "DiskCache")
        self._run(lambda: self.cache.set(key, text))

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


def __getattr__(name: str) -> Any:
    # AutoGen imported diskcache at the top of this module, and code patches it through here
    # (``mock.patch("autogen.cache.disk_cache.diskcache.Cache")``). It is imported on first
    # use instead, so that importing parley stays light.
    if name == "diskcache":
        import diskcache

        return diskcache
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
