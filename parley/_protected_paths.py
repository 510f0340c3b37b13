"""Folders this process relies on that generated code must never be able to write.

A response cache is the example that mattered: code in a sandbox whose work dir held the disk
cache rewrote an entry, and the host read it back. Whatever part of parley opens such a folder
registers it here (the disk cache does); the code executors refuse a work dir that contains a
registered folder, or lies inside one (``parley.coding._work_dir``).
"""

from __future__ import annotations

import os
import threading

__all__ = ["protect", "protected"]

_lock = threading.Lock()
_paths: dict[str, str] = {}  # resolved path -> what it is ("a response cache")


def protect(path: str | os.PathLike[str], what: str) -> None:
    """Record ``path`` (resolved now) as holding ``what``, for the rest of the process."""
    resolved = os.path.realpath(path)
    with _lock:
        _paths.setdefault(resolved, what)


def protected() -> dict[str, str]:
    """A snapshot of the registered folders: ``{resolved path: what it holds}``."""
    with _lock:
        return dict(_paths)
