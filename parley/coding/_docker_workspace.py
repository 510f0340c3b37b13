"""Which user code runs as in the container, and making the work dir writable for that user.

The work dir is the one host directory the container sees. Code must be able to create files
there, and whoever uses the work dir on the host must be able to read them. The rules:

* parley runs as a normal user: code runs as that user's uid:gid. Files are theirs; nothing on
  the host changes owner.
* parley runs as root and the work dir belongs to someone else (a user's project directory):
  code runs as that owner's uid:gid, so what it writes belongs to them, as if they wrote it.
* parley runs as root and the work dir belongs to root: code runs as uid:gid 1000:1000 (the
  ``sandbox`` user of parley's image; never root). The work dir is handed to that uid — but only
  if parley created it or found it empty: a directory that already holds something (``/root``, a
  project, ``/``) is never taken over. In that last case the code can read the work dir but
  not create files in it; pass ``user="0:0"`` knowingly, or use a directory of its own.

Files the executor writes (the code files) and the directories it creates for them get the
same owner, so the work dir looks as if the code's user had written everything in it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

__all__ = ["SANDBOX_UID", "choose_user", "hand_over", "prepare_work_dir"]

logger = logging.getLogger(__name__)

SANDBOX_UID = 1000
"""The uid (and gid) code runs as when parley runs as root in a root-owned work dir."""


def choose_user(work_dir: Path) -> str:
    """The ``"uid:gid"`` code in ``work_dir`` runs as (see the module's rules)."""
    if os.geteuid() != 0:
        return f"{os.geteuid()}:{os.getegid()}"
    info = work_dir.stat()
    if info.st_uid != 0:
        return f"{info.st_uid}:{info.st_gid}"
    return f"{SANDBOX_UID}:{SANDBOX_UID}"


def _numeric(user: str) -> tuple[int, int] | None:
    """``(uid, gid)`` of a numeric ``"uid[:gid]"``; None for names (they mean nothing here)."""
    uid, _, gid = user.partition(":")
    if not uid.isdigit() or (gid and not gid.isdigit()):
        return None
    return int(uid), int(gid or uid)


def hand_over(path: Path, user: str) -> None:
    """Give ``path`` to ``user`` if only parley's being root would keep that user out of it."""
    owner = _numeric(user)
    if os.geteuid() != 0 or owner is None or owner[0] == 0:
        return  # a normal user's files are already theirs; root needs nothing
    info = path.lstat()
    if (info.st_uid, info.st_gid) != owner:
        os.chown(path, *owner, follow_symlinks=False)


def prepare_work_dir(work_dir: Path, user: str, fresh: bool) -> None:
    """Make ``work_dir`` writable for ``user`` when that is safe (see the module's rules).

    ``fresh``: the executor created the work dir or found it empty when it was built (since
    then it has written code files into it).
    """
    owner = _numeric(user)
    if os.geteuid() != 0 or owner is None or owner[0] == 0:
        return
    info = work_dir.stat()
    if (info.st_uid, info.st_gid) == owner:
        return
    if fresh:
        os.chown(work_dir, *owner)
        return
    logger.warning(
        "work_dir %s belongs to uid %d and is not empty: parley leaves it as it is, so code "
        "running as %s in the container can read it but not create files in it. Use a new "
        "directory as work_dir, or pass user='0:0' to run the code as root.",
        work_dir,
        info.st_uid,
        user,
    )
