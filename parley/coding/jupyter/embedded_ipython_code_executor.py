"""Run code blocks in a kernel parley starts itself (AutoGen's ``EmbeddedIPythonCodeExecutor``).

``EmbeddedIPythonCodeExecutor(timeout=60, kernel_name="python3", output_dir="coding")`` is a
pydantic model, as in AutoGen: keyword arguments only; ``timeout`` below 1 and a missing
``output_dir`` raise ``pydantic.ValidationError`` (a ``ValueError``); a kernel that is not
installed raises ``ValueError`` naming ``python -m ipykernel install --user --name X``. It
starts one kernel (``jupyter_client``, ``pip install 'parley[jupyter]'``; see
``_embedded_channels``) and runs every block of every call in it, so variables survive between
blocks. The block loop's rules (languages, saved images and HTML, failures) are ``_results``',
a cell's are ``_kernel_messages``' — the same as ``JupyterCodeExecutor``'s. The differences
from AutoGen:

* :meth:`stop` and the context manager shut the kernel down (AutoGen had neither: the kernel
  lived until the process ended); it is also shut down at interpreter exit.
* Only the messages answering a block are read as its output (AutoGen read every iopub
  message, so output of a timed-out block leaked into the next result).
* A block past ``timeout`` is interrupted: the kernel keeps its variables (AutoGen left the
  block running). The timeout is the block's whole running time, not the longest silence; a
  kernel that ignores the interrupt or dies is restarted and the result says so. A cancelled
  chat interrupts the block too.
* Image types are saved with their own extension (AutoGen wrote every ``image/*``, SVG
  included, to a ``.png`` file); ``sh``/``bash`` blocks run as shell scripts (``%%bash``),
  unless written for IPython (``!echo hi``, ``%cd``: run as a notebook cell, as in AutoGen).
* The kernel runs in ``output_dir`` (AutoGen: the current directory), with parley's minimal
  environment (no API keys), its sockets and connection file in a private folder. The default
  ``output_dir`` is ``coding``, created on demand (AutoGen: ``.``); a folder holding a cache, a
  virtualenv, parley's sources or a git repository is refused, as for the command-line
  executors.
* Unlike the gateway's kernels (``LocalJupyterServer``), this kernel is not under parley's
  process supervisor: processes the code starts in a session of their own can outlive
  :meth:`stop`, and a kernel started as root keeps root's capabilities. Prefer
  ``JupyterCodeExecutor(LocalJupyterServer())`` where that matters.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr, field_validator

from .._blocks import DEFAULT_WORK_DIR
from ._embedded_channels import EmbeddedKernel, kernel_language
from ._kernel_executor import KernelExecutor
from ._kernel_messages import CellEnd, CellOutcome, run_cell, wait_until_ready
from ._results import checked_output_dir

__all__ = ["EmbeddedIPythonCodeExecutor"]


_READY_SECONDS = 60.0


class EmbeddedIPythonCodeExecutor(KernelExecutor, BaseModel):
    """Runs code blocks in one local Jupyter kernel (the module's rules)."""

    timeout: int = Field(default=60, ge=1, description="Seconds each block may run.")
    kernel_name: str = Field(
        default="python3", description="The kernel spec to start; it must be installed."
    )
    output_dir: Path | str = Field(
        default=DEFAULT_WORK_DIR,
        validate_default=True,
        description="Where the kernel runs and images and HTML are saved; it must exist.",
    )

    _language: str = PrivateAttr(default="python")
    _kernel: EmbeddedKernel | None = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.RLock)
    _code_running: contextlib.ExitStack = PrivateAttr(default_factory=contextlib.ExitStack)

    @field_validator("output_dir")
    @classmethod
    def _output_dir_must_exist(cls, value: Path | str) -> Path:
        return checked_output_dir(value)

    def __init__(self, **kwargs: Any) -> None:
        """Check the arguments, then start the kernel and wait until it answers."""
        super().__init__(**kwargs)
        self._language = kernel_language(self.kernel_name)
        self._launch(self._start)

    def run_cell(self, code: str, *, shell: bool) -> CellOutcome:
        """One cell within the timeout (for ``_results.execute_blocks``)."""
        assert self._kernel is not None
        return run_cell(self._kernel, code, self.timeout, shell=shell)

    def recover(self, end: CellEnd) -> None:
        """A new kernel after a stuck or dead one (for ``_results.execute_blocks``)."""
        self.restart()

    def restart(self) -> None:
        """Shut the kernel down and start a new one: variables are lost."""
        with self._lock:
            self._shutdown()
            self._start()

    # -- the steps of KernelExecutor ----------------------------------------------------------------

    def _kernel_ready(self) -> bool:
        return self._kernel is not None

    def _output_folder(self) -> Path:
        return Path(self.output_dir)

    def _start(self) -> None:
        kernel = EmbeddedKernel(self.kernel_name, Path(self.output_dir))
        self._kernel = kernel
        if not wait_until_ready(kernel, _READY_SECONDS):
            raise TimeoutError(
                f"The {self.kernel_name} kernel did not answer within {_READY_SECONDS:g} s."
            )

    def _shutdown(self) -> None:
        kernel, self._kernel = self._kernel, None
        if kernel is not None:
            kernel.shutdown()
