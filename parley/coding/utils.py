"""AutoGen's ``autogen.coding.utils``: the executors' file-name rule and pip silencing.

Both are faces over what the executors use: the first-line comment rule of
:mod:`parley.coding._paths` (kept inside the work dir) and :func:`executor_base.silence_pip`.
"""

from __future__ import annotations

from pathlib import Path

from ._paths import filename_from_first_line, resolve_in_work_dir
from .executor_base import silence_pip

__all__ = ["silence_pip"]


def _get_file_name_from_content(code: str, workspace_path: Path) -> str | None:
    """The file a block names on its first line (``# x.py``, ``# filename: x.py``, ``// x.js``,
    ``/* x.css */``, ``<!-- x.html -->``), relative to ``workspace_path``; None if the first
    line names none. A name leading outside the workspace raises
    :class:`~parley.exceptions.OutsideWorkDirError`, a ``ValueError`` as AutoGen raised."""
    name = filename_from_first_line(code)
    if name is None:
        return None
    root = Path(workspace_path)
    return str(resolve_in_work_dir(root, name).relative_to(root.resolve()))
