"""diskcache, made safe to open on a directory someone else can write.

Stock diskcache trusts its directory completely: a value stored in pickle mode is unpickled on
read (so whoever can write the directory runs code in the reading process); a row's file name
is joined to the directory and read, or deleted when the row is replaced or culled, wherever it
points; and the ``Settings`` table is applied when the cache opens, ``sqlite_*`` rows as
PRAGMAs, ``disk_*`` rows as constructor arguments and attributes of the ``Disk``, every other
row as an attribute of the ``Cache``.

Here values are text only (parley's JSON), and reading one never unpickles: an entry in any other
mode, a key stored pickled, or a file outside the directory (or not a regular file) raises
:class:`ForeignEntry`. Files outside the directory are never deleted. The settings are parley's
own, pinned: the rows of a foreign ``Settings`` table are never applied. The directory stays
in diskcache's format, so diskcache itself can still open it.

This module imports diskcache; :class:`parley.cache.DiskCache` imports it when it is created.
"""

from __future__ import annotations

import logging
import os
import stat
from typing import Any

import diskcache.core
from diskcache.core import DEFAULT_SETTINGS, ENOVAL, METADATA, MODE_RAW, MODE_TEXT

from ._json_values import ForeignEntry

__all__ = ["SETTINGS", "SafeCache", "SafeDisk", "stock_cache_class"]

logger = logging.getLogger("parley.cache.disk_cache")

# diskcache's defaults (what AutoGen used), passed explicitly and enforced on every use. The
# pickle protocol is among them but unused: nothing is pickled.
SETTINGS: dict[str, Any] = dict(DEFAULT_SETTINGS)
# A cached response is rarely more than a few megabytes; a bigger "value file" is not ours.
_MAX_FILE_BYTES = 256 * 1024 * 1024
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)  # the path was resolved: a link now is a swap, refuse it
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO planted as a value file must not block the read
    | getattr(os, "O_CLOEXEC", 0)
)


class SafeDisk(diskcache.core.Disk):  # type: ignore[misc]
    """A ``Disk`` that stores and returns text only and stays inside its directory."""

    def __init__(
        self, directory: str, min_file_size: int = 0, pickle_protocol: int = 0, **_foreign: Any
    ) -> None:
        # Other keyword arguments can only come from a foreign Settings table (disk_* rows).
        super().__init__(directory, min_file_size=min_file_size, pickle_protocol=pickle_protocol)
        self._root = os.path.realpath(directory)

    def put(self, key: Any) -> tuple[Any, bool]:
        if type(key) is not str:
            raise TypeError(f"disk cache keys must be str, got {type(key).__name__}")
        return key, True

    def get(self, key: Any, raw: bool) -> Any:
        if not raw:
            raise ForeignEntry("its key is pickled")
        return super().get(key, raw)

    def store(self, value: Any, read: bool, key: Any = diskcache.core.UNKNOWN) -> Any:
        if read or type(value) is not str:
            raise TypeError(f"the disk cache stores text, got {type(value).__name__}")
        return super().store(value, read, key=key)

    def fetch(self, mode: int, filename: Any, value: Any, read: bool) -> str:
        if read:
            raise ForeignEntry("it was asked for as a file")
        if mode == MODE_RAW and type(value) is str:
            return value
        if mode == MODE_TEXT and value is None:
            return self._read_text(filename)
        if mode == diskcache.core.MODE_PICKLE:
            raise ForeignEntry("it is a pickle")
        raise ForeignEntry(f"it is stored in mode {mode!r} as {type(value).__name__}")

    def remove(self, file_path: Any) -> None:
        if self._inside(file_path, parent_only=True) is None:
            logger.warning(
                "disk cache %s: not deleting %r, which an entry named but lies outside it",
                self._directory,
                file_path,
            )
            return
        super().remove(file_path)

    def _inside(self, filename: Any, *, parent_only: bool = False) -> str | None:
        """The resolved path of ``filename`` in the directory, or None if it leads out of it.

        With ``parent_only`` only the containing directory is resolved: deleting a link deletes
        the link, wherever it points.
        """
        if not isinstance(filename, str) or not filename or os.path.isabs(filename):
            return None
        full = os.path.join(self._root, filename)
        head, tail = os.path.split(full)
        if not tail or tail in (".", ".."):
            return None
        real = os.path.join(os.path.realpath(head), tail) if parent_only else os.path.realpath(full)
        if os.path.commonpath([self._root, real]) != self._root or real == self._root:
            return None
        return real

    def _read_text(self, filename: Any) -> str:
        path = self._inside(filename)
        if path is None:
            raise ForeignEntry(f"its value file {filename!r} lies outside the cache directory")
        try:
            fd = os.open(path, _OPEN_FLAGS)
        except FileNotFoundError:
            raise  # replaced by another writer meanwhile: diskcache reports a miss
        except OSError as error:
            raise ForeignEntry(f"its value file cannot be opened ({error.strerror})") from None
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ForeignEntry("its value file is not a regular file")
            if info.st_size > _MAX_FILE_BYTES:
                raise ForeignEntry(f"its value file holds {info.st_size} bytes")
            data = file.read(_MAX_FILE_BYTES + 1)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ForeignEntry("its value file is not UTF-8 text") from None


# From diskcache.core, not the package: code may have replaced ``diskcache.Cache`` (a test
# double) by the time this module is first imported.
class SafeCache(diskcache.core.Cache):  # type: ignore[misc]
    """A ``diskcache.Cache`` whose settings are :data:`SETTINGS`, whatever its database says."""

    def __init__(self, directory: str, timeout: float = 60, disk: Any = None) -> None:
        # ``disk`` is accepted (and ignored) for diskcache's __setstate__, which passes it.
        super().__init__(directory, timeout=timeout, disk=SafeDisk, **SETTINGS)

    def reset(self, key: str, value: Any = ENOVAL, update: bool = True) -> Any:
        # diskcache calls this with every row of the Settings table, when the cache opens and
        # (for sqlite_* rows) on every new connection: only parley's values get through.
        if key in SETTINGS:
            return super().reset(key, SETTINGS[key], update and value is not ENOVAL)
        if key in METADATA:
            if value is not ENOVAL:
                return super().reset(key, value, update)
            counted = super().reset(key)
            if type(counted) is not int:
                setattr(self, key, 0)
                return 0
            return counted
        _warn_ignored(self.directory, key)
        return None


_ignored: set[tuple[str, str]] = set()


def _warn_ignored(directory: str, key: str) -> None:
    if (directory, key) in _ignored:
        return
    _ignored.add((directory, key))
    logger.warning(
        "disk cache %s: ignoring the setting %r found in its database; parley did not write it",
        directory,
        key,
    )


def stock_cache_class() -> type:
    """diskcache's own ``Cache`` class (what :class:`SafeCache` extends), however
    ``diskcache.Cache`` is patched now."""
    return diskcache.core.Cache  # type: ignore[no-any-return]
