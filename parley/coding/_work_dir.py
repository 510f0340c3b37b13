"""Which folder code runs in: a dedicated one, never one holding what code must not touch.

Code that can write a folder can often get code run *outside* its sandbox later: a response
cache the host reads back, a virtualenv whose ``.pth`` files the next Python start executes,
parley's own sources, a git repository whose hooks run at the next commit. So the executors'
default work dir is a dedicated folder, :data:`DEFAULT_WORK_DIR` (AutoGen used ``.`` for the
executors and a folder inside its installed package for the legacy path), and
:func:`check_work_dir` refuses, with :class:`~parley.exceptions.UnsafeWorkDirError`, a work dir
that:

* contains, or lies inside, a path parley itself relies on: one registered by this process
  (``parley._protected_paths``: a response cache it opened, a config list, key file or ``.env``
  it read, a runtime log it writes), the current directory's ``.cache`` (where ``cache_seed``
  caches go), the running virtualenv, parley's installed package;
* holds, before any code ran there, a ``.cache`` or ``.git`` folder, a virtualenv (``pyvenv.cfg``)
  or a disk cache (``cache.db``) at its top or one level down, or at its top a file that holds
  API keys by its name: ``OAI_CONFIG_LIST*``, ``.env`` (and ``.env.*``), AutoGen's key files
  ``key_openai.txt`` / ``key_aoai.txt`` (whether or not parley has read them: code would).

The first call for a folder looks at its contents; later calls (before each block) only at the
registered and known folders, which cost a few ``stat`` calls. Folders the code itself creates
(it may well ``git init``) are therefore not held against it.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from .._protected_paths import protected
from ..exceptions import UnsafeWorkDirError
from ._blocks import DEFAULT_WORK_DIR

__all__ = ["DEFAULT_WORK_DIR", "check_work_dir"]

_PACKAGE = Path(__file__).resolve().parents[1]  # parley/
_MAX_ENTRIES = 2000  # a huge folder is only looked at this far; the known folders are exact
_KEY_FILES = ("key_openai.txt", "key_aoai.txt")  # config_list_openai_aoai's defaults
_lock = threading.Lock()
_inspected: set[str] = set()


def _known_folders() -> dict[str, str]:
    folders = {str(_PACKAGE): "parley's own sources"}
    if sys.prefix != sys.base_prefix:
        folders[os.path.realpath(sys.prefix)] = "the running virtualenv"
    folders.setdefault(os.path.realpath(".cache"), "the folder where cache_seed keeps disk caches")
    for path, what in protected().items():
        folders.setdefault(path, what)
    return folders


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _holds_keys(name: str) -> str | None:
    """What a file called ``name`` is, if its name says it holds API keys."""
    if name.startswith("OAI_CONFIG_LIST"):
        return "a config list"
    if name == ".env" or name.startswith(".env."):
        return "a .env file"
    if name in _KEY_FILES:
        return "a key file"
    return None


def _contents_problem(root: Path) -> str | None:
    """What in ``root`` (its top and one level down) code must not get at, if anything."""
    seen = 0
    try:
        top = list(os.scandir(root))
    except OSError:
        return None  # unreadable or gone: creating files there will say why
    for entry in top:
        name = entry.name
        secrets = _holds_keys(name)
        if secrets is not None:
            return f"{secrets} ({name})"
        if name == ".git":
            return "a git repository (.git)"
        if name == "pyvenv.cfg":
            return "a virtualenv (pyvenv.cfg)"
        if name == "cache.db":
            return "a disk cache (cache.db)"
        if not entry.is_dir(follow_symlinks=False):
            continue
        if name == ".cache":
            return "a cache folder (.cache)"
        try:
            with os.scandir(entry.path) as inner:
                for item in inner:
                    seen += 1
                    if seen > _MAX_ENTRIES:
                        return None
                    if item.name in ("pyvenv.cfg", "cache.db"):
                        kind = "a virtualenv" if item.name == "pyvenv.cfg" else "a disk cache"
                        return f"{kind} ({name}/{item.name})"
        except OSError:
            continue
    return None


def check_work_dir(work_dir: str | os.PathLike[str]) -> None:
    """Raise :class:`UnsafeWorkDirError` if code must not run in ``work_dir`` (module docs)."""
    resolved = os.path.realpath(work_dir)
    for folder, what in _known_folders().items():
        if _inside(folder, resolved):
            raise UnsafeWorkDirError(str(work_dir), f"it contains {what} ({folder})")
        if _inside(resolved, folder):
            raise UnsafeWorkDirError(str(work_dir), f"it is inside {what} ({folder})")
    with _lock:
        if resolved in _inspected:
            return
    problem = _contents_problem(Path(resolved))
    if problem is not None:
        raise UnsafeWorkDirError(str(work_dir), f"it contains {problem}")
    with _lock:
        _inspected.add(resolved)
