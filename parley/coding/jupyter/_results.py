"""The Jupyter executors' one block loop: which blocks a kernel runs, and the result they give.

Both executors (``JupyterCodeExecutor``, ``EmbeddedIPythonCodeExecutor``) call
:func:`execute_blocks` with a :class:`KernelBackend` saying how their kernel is reached and
restarted, and check their ``output_dir`` with :func:`checked_output_dir`. The rules:

* ``output_dir`` must exist (``ValueError``, as in AutoGen), except the default, ``coding``, a
  dedicated folder created on demand (AutoGen's default was ``.``). It is where the kernel runs,
  so a folder holding what code must not write (a response cache, a virtualenv, parley's
  sources, a git repository) is refused with ``UnsafeWorkDirError``, as the command-line
  executors refuse such a ``work_dir`` (``parley.coding._work_dir``); ``.`` always holds the
  place of ``cache_seed``'s ``.cache``.
* Blocks run in order in the one kernel, so variables survive between blocks and calls. The
  first block that fails (an error, a timeout, a dead kernel, a language the kernel cannot run)
  ends the call with exit code 1; the output of the blocks before it, and the block's own
  output before the failure, are kept (AutoGen kept only the error).
* Languages (AutoGen sent every block to the kernel as it was): a block in the kernel's own
  language (``python``, ``py``, ``python3``, ``ipython`` for a Python kernel), or with no
  language, runs as is, as a notebook cell: IPython's ``!command`` and ``%magic`` lines work.
  A ``sh``/``bash``/``shell`` block in a Python kernel with such lines (``!echo hi``, as AutoGen's
  examples write them) runs as such a cell too; any other shell block runs through IPython's
  ``%%bash`` cell magic (its exit status is the error, without IPython's traceback);
  any other language gives ``ERROR: unknown language X`` and runs nothing.
* ``pip install`` lines are made quiet (``silence_pip``), as in AutoGen.
* Rich outputs are saved to ``output_dir`` as ``<uuid4 hex>.<ext>``: PNG, JPEG and GIF images
  (decoded from base64) and SVG images are reported as ``Image data saved to <path>``, HTML as
  ``HTML data saved to <path>``; the paths are the result's ``output_files``. (AutoGen's
  gateway executor saved only PNG and its embedded one wrote every image type, SVG included,
  to a ``.png`` file.) Other image types are JSON-dumped into the output.
* A kernel that went on running after its timeout's interrupt, or died, is restarted (a
  gateway restarts a dead kernel itself) before the result is returned, so the next call runs;
  the result says the variables are lost.
* A single ``ERROR:`` prefix marks a failure (AutoGen's gateway executor wrote
  ``ERROR: ERROR: ...``).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from pathlib import Path
from typing import Protocol

from .._blocks import DEFAULT_WORK_DIR, SHELLS
from .._code_file import write_regular_file
from .._work_dir import check_work_dir
from ..base import CodeBlock, IPythonCodeResult
from ..executor_base import silence_pip
from ._kernel_messages import CellEnd, CellOutcome, ExecutionResult

__all__ = ["KernelBackend", "checked_output_dir", "execute_blocks", "save_data_item"]

_PYTHON_NAMES = frozenset({"python", "py", "python3", "ipython"})
# A line starting with IPython's shell escape or a magic: ``!cmd``, ``!!cmd``, ``%magic``.
_IPYTHON_LINE = re.compile(r"^[ \t]*[!%]", re.MULTILINE)
# MIME type -> (file extension, whether the data is base64)
_SAVED_TYPES = {
    "image/png": (".png", True),
    "image/jpeg": (".jpg", True),
    "image/gif": (".gif", True),
    "image/svg+xml": (".svg", False),
    "text/html": (".html", False),
}


class KernelBackend(Protocol):
    """What the block loop needs from an executor's kernel."""

    @property
    def language(self) -> str:
        """The kernel's language, lower case (``python`` for ipykernel)."""
        ...

    def run_cell(self, code: str, *, shell: bool) -> CellOutcome:
        """Run one cell within the executor's timeout (``_kernel_messages.run_cell``)."""
        ...

    def recover(self, end: CellEnd) -> None:
        """Give the executor a working kernel again after a cell ended ``"stuck"`` (it went on
        running after the interrupt) or ``"died"``."""
        ...


def checked_output_dir(output_dir: Path | str, default: str = DEFAULT_WORK_DIR) -> Path:
    """``output_dir`` as a Path: it must exist (the default folder is created) and be safe to
    run code in (``parley.coding._work_dir``)."""
    path = Path(output_dir)
    if str(output_dir) == default:
        path.mkdir(exist_ok=True)
    if not path.is_dir():
        raise ValueError(f"Output directory {output_dir} does not exist.")
    check_work_dir(path)
    return path


def _cell_source(block: CodeBlock, kernel_language: str) -> tuple[str, bool] | None:
    """The cell that runs ``block`` and whether it is a shell block; None if the kernel
    cannot run its language."""
    lang = block.language.strip().lower()
    python_kernel = kernel_language == "python"
    if not lang or lang == kernel_language or (python_kernel and lang in _PYTHON_NAMES):
        return silence_pip(block.code, "python" if python_kernel else lang), False
    if python_kernel and lang in SHELLS:
        if _IPYTHON_LINE.search(block.code):
            # Written for IPython (``!ls``, ``%cd``), as a notebook cell would be: run as one.
            return silence_pip(block.code, "python"), False
        return "%%bash\n" + silence_pip(block.code, lang), True
    return None


def save_data_item(item: ExecutionResult.DataItem, output_dir: Path) -> tuple[str | None, str]:
    """Save a rich output to ``output_dir``: its path (None if it is not a saved type) and the
    line that reports it."""
    kind = _SAVED_TYPES.get(item.mime_type)
    if kind is None:
        return None, json.dumps(item.data)
    extension, is_base64 = kind
    path = (output_dir / f"{uuid.uuid4().hex}{extension}").resolve()
    what = "HTML" if item.mime_type == "text/html" else "Image"
    try:
        content = base64.b64decode(item.data) if is_base64 else item.data.encode("utf-8")
        write_regular_file(path, content, exclusive=True)
    except (binascii.Error, ValueError, OSError) as error:
        return None, f"ERROR: {what} data ({item.mime_type}) could not be saved: {error}"
    return str(path), f"{what} data saved to {path}"


def _block_output(result: ExecutionResult, output_dir: Path, files: list[str]) -> str:
    """The block's text, then a line for each rich output (saved, its path added to ``files``)."""
    lines = [result.output.rstrip("\n")] if result.output else []
    for item in result.data_items:
        path, line = save_data_item(item, output_dir)
        if path is not None:
            files.append(path)
        lines.append(line)
    return "".join(line + "\n" for line in lines)


def execute_blocks(
    backend: KernelBackend, code_blocks: list[CodeBlock], output_dir: Path
) -> IPythonCodeResult:
    """Run ``code_blocks`` in the backend's kernel under the module's rules."""
    outputs: list[str] = []
    files: list[str] = []

    def failed(text: str) -> IPythonCodeResult:
        return IPythonCodeResult(exit_code=1, output="".join(outputs) + text, output_files=files)

    for block in code_blocks:
        cell = _cell_source(block, backend.language)
        if cell is None:
            return failed(
                f"ERROR: unknown language {block.language}: this {backend.language} kernel runs "
                f"{backend.language} blocks"
                + (" and shell blocks (sh, bash)" if backend.language == "python" else "")
                + "\n"
            )
        source, shell = cell
        outcome = backend.run_cell(source, shell=shell)
        outputs.append(_block_output(outcome.result, output_dir, files))
        if outcome.end in ("stuck", "died"):
            backend.recover(outcome.end)
            outputs.append(
                "The kernel was restarted: variables and imports must be set up again.\n"
            )
        if not outcome.result.is_ok:
            return failed("")
    return IPythonCodeResult(exit_code=0, output="".join(outputs), output_files=files)
