"""What the bubblewrap sandbox shows empty although the folders around it are shown.

The sandbox shows, read-only, the system's folders and the Python installations the code runs
with (``_bwrap``). Some files there hold secrets, and each is covered (a file by ``/dev/null``,
a folder by an empty read-only tmpfs), where it exists and the sandbox would show it:

* the secrets of ``/etc`` (``_bwrap.ETC_SECRETS``: shadow passwords, keys, ``/etc/pip.conf``...);
* every pip configuration file this machine has, since they often hold an index URL with a
  password in it: each shown installation's site file (``<prefix>/pip.conf``: a
  ``virtual_env_context`` venv's own), the global ones (``/etc/xdg/pip``, or each folder of
  ``$XDG_CONFIG_DIRS``, then ``/etc/pip.conf``), the user's (``~/.pip/pip.conf``,
  ``~/.config/pip/pip.conf``, or under ``$XDG_CONFIG_HOME``) and ``$PIP_CONFIG_FILE``;
* every file and folder parley registered as one it trusts (``parley._protected_paths``: config
  lists, ``.env`` files, runtime logs, caches, stores), wherever one lies in a shown folder.

Registered paths may come later than the sandbox: :func:`hidden` is asked again before each
block (a few ``stat`` calls).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from .._protected_paths import protected

__all__ = ["hidden", "mask_args", "pip_config_paths"]

_PIP_CONFIG = "pip.conf"


def pip_config_paths(prefixes: Iterable[str]) -> list[str]:
    """Where pip looks for configuration on this machine, for Pythons installed at
    ``prefixes`` (existing or not)."""
    home = os.path.expanduser("~")
    xdg_dirs = os.environ.get("XDG_CONFIG_DIRS") or "/etc/xdg"
    xdg_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    paths = [os.path.join(folder, "pip") for folder in xdg_dirs.split(os.pathsep) if folder]
    paths += ["/etc/xdg/pip", os.path.join("/etc", _PIP_CONFIG)]
    paths += [os.path.join(prefix, _PIP_CONFIG) for prefix in prefixes]
    paths += [os.path.join(home, ".pip"), os.path.join(xdg_home, "pip")]
    if os.environ.get("PIP_CONFIG_FILE"):
        paths.append(os.environ["PIP_CONFIG_FILE"])
    return paths


def _within(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def hidden(candidates: Iterable[str], mounts: Iterable[tuple[str, str]]) -> list[str]:
    """Where, inside the sandbox, ``candidates`` and the registered protected paths appear:
    those that exist and lie in one of ``mounts`` (``(path inside, real path on the host)``
    of each shown folder), as paths inside, sorted so a folder comes before what it holds."""
    shown = list(mounts)
    found: set[str] = set()
    for path in [*candidates, *protected()]:
        real = os.path.realpath(path)
        if not os.path.lexists(real):
            continue
        for inside, source in shown:
            if _within(real, source):
                found.add(inside.rstrip("/") + real[len(source.rstrip("/")) :])
    # A path inside another hidden folder is gone with it (and could not be mounted over).
    kept = [p for p in found if not any(p != q and _within(p, q) for q in found)]
    return sorted(kept)


def mask_args(paths: Iterable[str]) -> list[str]:
    """bubblewrap options covering each of ``paths``: a folder with an empty read-only tmpfs,
    anything else with ``/dev/null``."""
    args: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            args += ["--tmpfs", path, "--remount-ro", path]
        else:
            args += ["--ro-bind", "/dev/null", path]
    return args
