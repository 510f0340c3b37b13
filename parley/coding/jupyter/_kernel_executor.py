"""What both Jupyter executors share around their kernel: the call, the lifetime, the lock.

:class:`KernelExecutor` is a mixin (``EmbeddedIPythonCodeExecutor`` is also a pydantic model)
that gives an executor ``code_extractor``, ``language``, ``execute_code_blocks`` (the block loop
of ``_results``, one call at a time), ``stop`` and the context manager. An executor supplies
``_lock`` (a ``threading.RLock``: a restart inside a call takes it again), ``_code_running``
(an ``ExitStack``), ``_language``, and the steps ``_kernel_ready``, ``_output_folder``,
``_shutdown``, ``run_cell`` and ``recover``; it calls :meth:`KernelExecutor._launch` with its
start step at the end of its constructor.

While a kernel lives, parley's process is non-dumpable (``_process.while_code_runs``: a kernel
runs code at any time, and must not read parley's environment or memory through ``/proc``), and
the executor's ``stop`` is registered to run at interpreter exit.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..._core.lifetime import StopsOnExit
from .._process import while_code_runs
from .._work_dir import check_work_dir
from ..base import CodeBlock, IPythonCodeResult
from ..markdown_code_extractor import MarkdownCodeExtractor
from ._results import execute_blocks

if TYPE_CHECKING:
    from ._kernel_messages import CellEnd, CellOutcome

__all__ = ["KernelExecutor"]


class KernelExecutor(StopsOnExit):
    """The shared part of the Jupyter executors (the module's docs)."""

    if TYPE_CHECKING:
        _lock: threading.RLock
        _code_running: contextlib.ExitStack
        _language: str

    @property
    def code_extractor(self) -> MarkdownCodeExtractor:
        """Finds the fenced code blocks of a message."""
        return MarkdownCodeExtractor()

    @property
    def language(self) -> str:
        """The kernel's language (``python`` for ``python3``)."""
        return self._language

    def execute_code_blocks(self, code_blocks: list[CodeBlock]) -> IPythonCodeResult:
        """Run the blocks in order in the kernel; stop at the first failure.

        Raises :class:`~parley.exceptions.ExecutionCancelledError` if the calling chat is
        cancelled (the block is interrupted first), and ``ValueError`` after :meth:`stop`.
        """
        with self._lock:
            if not self._kernel_ready():
                raise ValueError(f"This {type(self).__name__} was stopped; create a new one.")
            folder = self._output_folder()
            check_work_dir(folder)  # a cache may have been opened inside it since
            return execute_blocks(self, code_blocks, folder)

    def stop(self) -> None:
        """Shut the kernel down; safe to call twice."""
        atexit.unregister(self.stop)
        with self._lock:
            try:
                self._shutdown()
            finally:
                self._code_running.close()

    def _launch(self, start: Callable[[], None]) -> None:
        """Run the executor's ``start`` step with the kernel's lifetime around it."""
        self._code_running.enter_context(while_code_runs())
        try:
            start()
        except BaseException:
            self.stop()
            raise
        atexit.register(self.stop)

    # -- the steps an executor supplies -----------------------------------------------------------

    def _kernel_ready(self) -> bool:
        """Whether a kernel is there to run code (False once stopped)."""
        raise NotImplementedError

    def _output_folder(self) -> Path:
        """``output_dir``, checked (``_results.checked_output_dir``)."""
        raise NotImplementedError

    def _shutdown(self) -> None:
        """Release the kernel (and what else the executor owns); safe to call twice."""
        raise NotImplementedError

    def run_cell(self, code: str, *, shell: bool) -> CellOutcome:
        """One cell within the timeout (``_results.KernelBackend``)."""
        raise NotImplementedError

    def recover(self, end: CellEnd) -> None:
        """A working kernel after a stuck or dead one (``_results.KernelBackend``)."""
        raise NotImplementedError
