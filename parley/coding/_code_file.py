"""A code block's file on the host: only ever a regular file, and never a wait.

Code that ran in the work dir may have left anything at the name the next block asks for
(``# filename: next.py``): a named pipe, which an ``open`` for writing waits on for ever until a
reader comes; a symbolic link; a device; a socket; a directory. Every host-side write and read of
a code file goes through this module (the executors' code files and functions module, the legacy
``execute_code``, the Jupyter executors' saved outputs):

* the name is opened with ``O_NOFOLLOW | O_NONBLOCK | O_NOCTTY`` (and ``O_CREAT`` to write),
  never ``O_TRUNC``: a link is refused by the kernel, a FIFO without a reader fails at once
  (``ENXIO``) and one with a reader opens without waiting, and nothing is emptied yet;
* ``fstat`` on what was opened must say "regular file", else
  :class:`~parley.exceptions.UnsafeCodeFileError` (an ``OSError``) names what it is;
* only then is the file emptied and written (or read), and given to the code's user.

So writing a file takes no longer than the disk does, and a block's time is bounded by its
timeout from its first host-side step to its last.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..exceptions import UnsafeCodeFileError

__all__ = ["read_regular_file", "write_regular_file"]

_OPEN_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)
# What open() says about a name that is not a regular file: a link (O_NOFOLLOW), a FIFO or
# socket nobody reads (O_NONBLOCK), a directory (opened to write).
_TYPE_ERRNOS = {errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.EMLINK, errno.EOPNOTSUPP}


def _kind(mode: int) -> str | None:
    """What a file of ``mode`` is, unless a regular file (None)."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _open(path: Path, flags: int) -> int:
    """``path`` opened with ``flags`` and the module's, checked to be a regular file."""
    try:
        fd = os.open(path, flags | _OPEN_FLAGS, 0o666)
    except OSError as error:
        try:
            kind = _kind(os.lstat(path).st_mode)
        except OSError:
            kind = None
        if kind is not None:
            raise UnsafeCodeFileError(str(path), kind) from error
        if error.errno in _TYPE_ERRNOS:  # gone again since: still not a file we opened
            raise UnsafeCodeFileError(str(path), "not a regular file") from error
        raise
    try:
        kind = _kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise UnsafeCodeFileError(str(path), kind)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_regular_file(
    path: Path,
    data: str | bytes,
    *,
    owner: tuple[int, int] | None = None,
    exclusive: bool = False,
) -> None:
    """Write ``data`` (text as UTF-8) as the regular file ``path`` (the module's rules).

    ``owner``: ``(uid, gid)`` to give the file to (parley as root, code as another user);
    ``exclusive``: the file must not exist yet. Raises
    :class:`~parley.exceptions.UnsafeCodeFileError` for anything but a regular file, and
    ``OSError`` when the file cannot be written.
    """
    content = data.encode("utf-8") if isinstance(data, str) else data
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else 0)
    fd = _open(path, flags)
    with open(fd, "wb", closefd=True) as file:
        os.ftruncate(fd, 0)
        file.write(content)
        if owner is not None:
            info = os.fstat(fd)
            if (info.st_uid, info.st_gid) != owner:
                os.fchown(fd, *owner)


def read_regular_file(path: Path) -> str:
    """The text (UTF-8, bad bytes replaced) of the regular file ``path`` (the module's
    rules); :class:`~parley.exceptions.UnsafeCodeFileError` for anything else."""
    fd = _open(path, os.O_RDONLY)
    with open(fd, "rb", closefd=True) as file:
        return file.read().decode("utf-8", "replace")
