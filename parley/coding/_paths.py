"""Where a code block is written: the ``# filename:`` convention, kept inside the work dir.

A block may name its file on its first line — ``# filename: x.py``, ``// filename: x.js``,
``/* filename: x.css */`` or ``<!-- filename: x.html -->``, as in AutoGen. Unlike AutoGen, the
``filename:`` label is required: AutoGen took any first-line comment (``# compute primes``)
for a file name. A name that leads outside the work dir — ``../escape.py``, an absolute path
elsewhere, or a symlink pointing out — is refused with :class:`OutsideWorkDirError`.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from ..exceptions import OutsideWorkDirError

__all__ = ["OutsideWorkDirError", "default_filename", "filename_from_code", "resolve_in_work_dir"]

_FIRST_LINE = re.compile(
    r"^\s*(?:<!--\s*filename:\s*(?P<html>.+?)\s*-->|/\*\s*filename:\s*(?P<c>.+?)\s*\*/"
    r"|//\s*filename:\s*(?P<js>.+?)|#\s*filename:\s*(?P<sh>.+?))\s*$"
)


def filename_from_code(code: str) -> str | None:
    """The file name a block's first line asks for, or None."""
    first = code.split("\n", 1)[0].rstrip("\r")
    match = _FIRST_LINE.match(first)
    if match is None:
        return None
    return next(g for g in match.groups() if g is not None).strip() or None


def default_filename(code: str, extension: str) -> str:
    """``tmp_code_<md5 of the code>.<extension>``, as AutoGen names unnamed blocks."""
    return f"tmp_code_{hashlib.md5(code.encode()).hexdigest()}.{extension}"


def resolve_in_work_dir(work_dir: Path | str, filename: str) -> Path:
    """The absolute path of ``filename`` inside ``work_dir``; OutsideWorkDirError otherwise."""
    root = Path(work_dir).resolve()
    if "\x00" in filename:
        raise OutsideWorkDirError(f"file name {filename!r} contains a NUL byte")
    # Follows symlinks, so a link pointing out is caught; realpath, not Path.resolve, which
    # raises RuntimeError on a link loop (one the code made is then refused when written).
    path = Path(os.path.realpath(root / filename))
    if path == root or not path.is_relative_to(root):
        raise OutsideWorkDirError(
            f"file name {filename!r} is outside the work dir {str(root)!r}; code may only write "
            "files inside it"
        )
    return path
