"""Where a code block is written: the file-name comment, kept inside the work dir.

The executors (AutoGen's ``autogen.coding.utils`` rule): a block's first line, stripped, names
its file when it is a comment — ``# x.py``, ``// x.js``, ``/* x.css */`` or ``<!-- x.html -->``
— with or without a ``filename:`` label (``# filename: x.py``). Without the label, a space
must follow the comment's opening (``#!/bin/sh`` and ``#include`` name nothing); so, as in
AutoGen, ``# compute primes`` is saved as the file ``compute primes``.

The legacy path (``code_execution_config`` without an executor) reads a ``# filename:`` label
only, as AutoGen's ``execute_code_blocks`` did (``filename_from_code``).

A name that leads outside the work dir — ``../escape.py``, an absolute path elsewhere, or a
symlink pointing out — is refused with :class:`OutsideWorkDirError`.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from ..exceptions import OutsideWorkDirError

__all__ = [
    "OutsideWorkDirError",
    "default_filename",
    "filename_from_code",
    "filename_from_first_line",
    "resolve_in_work_dir",
]

_FIRST_LINE = re.compile(
    r"^\s*(?:<!--\s*filename:\s*(?P<html>.+?)\s*-->|/\*\s*filename:\s*(?P<c>.+?)\s*\*/"
    r"|//\s*filename:\s*(?P<js>.+?)|#\s*filename:\s*(?P<sh>.+?))\s*$"
)


def filename_from_code(code: str) -> str | None:
    """The file name a block's first-line comment gives with a ``filename:`` label, or None
    (the legacy path's rule)."""
    first = code.split("\n", 1)[0].rstrip("\r")
    match = _FIRST_LINE.match(first)
    if match is None:
        return None
    return next(g for g in match.groups() if g is not None).strip() or None


# The text inside each kind of comment on a first line.
_COMMENTS = (
    re.compile(r"^<!--(.*?)-->"),
    re.compile(r"^/\*(.*?)\*/"),
    re.compile(r"^//(.*)$"),
    re.compile(r"^#(.*)$"),
)
_LABEL = "filename:"


def filename_from_first_line(code: str) -> str | None:
    """The file name a block's first-line comment gives, labelled or not (the executors' rule,
    AutoGen's); None if the first line is no such comment."""
    first = code.split("\n", 1)[0].strip()
    for comment in _COMMENTS:
        match = comment.match(first)
        if match is None:
            continue
        text = match.group(1)
        if text.lstrip().startswith(_LABEL):
            text = text.lstrip()[len(_LABEL) :]
        elif not text[:1].isspace():
            return None
        return text.strip() or None
    return None


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
