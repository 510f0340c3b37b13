"""Which user code runs as in a sandbox, and making the work dir writable for that user.

Both sandboxes follow these rules: the Docker executor's container and the local executor's
bubblewrap sandbox (``_bwrap``). The work dir is the one host directory the sandbox can write.
Code must be able to create files there, and whoever uses the work dir on the host must be able
to read them. The rules:

* parley runs as a normal user: code runs as that user's uid:gid. Files are theirs; nothing on
  the host changes owner.
* parley runs as root and the work dir belongs to someone else (a user's project directory):
  code runs as that owner's uid:gid, so what it writes belongs to them, as if they wrote it.
* parley runs as root and the work dir belongs to root: code runs as uid:gid 1000:1000 (the
  ``sandbox`` user of parley's image; never root). The work dir is handed to that uid — but only
  if parley created it or found it empty: a directory that already holds something (``/root``, a
  project, ``/``) is never taken over. In that last case the code can read the work dir but
  not create files in it; pass ``user="0:0"`` knowingly (Docker), or use a directory of its own.

Files the executor writes (the code files) and the directories it creates for them get the
same owner, so the work dir looks as if the code's user had written everything in it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ._code_file import write_regular_file

__all__ = ["SANDBOX_UID", "choose_user", "hand_over", "is_fresh", "prepare_work_dir", "write_as"]

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


def is_fresh(work_dir: Path) -> bool:
    """Whether ``work_dir`` is missing or empty: an executor built now may hand it over."""
    return not work_dir.exists() or not any(work_dir.iterdir())


def _numeric(user: str) -> tuple[int, int] | None:
    """``(uid, gid)`` of a numeric ``"uid[:gid]"``; None for names (they mean nothing here)."""
    uid, _, gid = user.partition(":")
    if not uid.isdigit() or (gid and not gid.isdigit()):
        return None
    return int(uid), int(gid or uid)


def hand_over(path: Path, user: str) -> None:
    """Give ``path`` to ``user`` if only parley's being root would keep that user out of it."""
    owner = _owner_to_give(user)
    if owner is None:
        return  # a normal user's files are already theirs; root needs nothing
    info = path.lstat()
    if (info.st_uid, info.st_gid) != owner:
        os.chown(path, *owner, follow_symlinks=False)


def _owner_to_give(user: str) -> tuple[int, int] | None:
    """``(uid, gid)`` files must be given to for ``user``, if parley (as root) must do it."""
    owner = _numeric(user)
    if os.geteuid() != 0 or owner is None or owner[0] == 0:
        return None
    return owner


def write_as(path: Path, code: str, root: Path, user: str) -> None:
    """Write the code file ``path`` (inside the work dir ``root``, resolved), creating its
    folders, all of it owned by ``user``; only as a regular file (``_code_file``: anything
    else is :class:`~parley.exceptions.UnsafeCodeFileError`)."""
    missing = [p for p in reversed(path.parents) if p.is_relative_to(root) and not p.exists()]
    path.parent.mkdir(parents=True, exist_ok=True)
    for item in missing:
        hand_over(item, user)
    write_regular_file(path, code, owner=_owner_to_give(user))


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
        "running as %s in the sandbox can read it but not create files in it. Use a new "
        "directory as work_dir, or (Docker) pass user='0:0' to run the code as root.",
        work_dir,
        info.st_uid,
        user,
    )
