"""Files and folders this process relies on that generated code must never write or read.

A response cache is the example that mattered: code in a sandbox whose work dir held the disk
cache rewrote an entry, and the host read it back. Whatever part of parley opens such a path
registers it here: the disk cache; the config lists, key files and ``.env`` files parley reads
(``parley.oai``: they hold API keys); the runtime logs (``parley.logger``: prompts and
results). The code executors refuse a work dir that contains a registered path, or lies inside
one (``parley.coding._work_dir``), and the bubblewrap sandbox shows one that lies in a folder
it shows as empty (``parley.coding._sandbox_hidden``).
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
    """A snapshot of the registered paths: ``{resolved path: what it holds}``."""
    with _lock:
        return dict(_paths)
