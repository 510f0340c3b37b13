"""Run code blocks in a kernel of a Jupyter Kernel Gateway (AutoGen's ``JupyterCodeExecutor``).

``JupyterCodeExecutor(LocalJupyterServer())`` starts one kernel on the gateway and runs every
block of every call in it, so variables survive between blocks. Same constructor, errors and
results as AutoGen; the block loop's rules (languages, saved images and HTML, failures) are
``_results``', a cell's are ``_kernel_messages``'. The differences from AutoGen:

* A block that runs past ``timeout`` is interrupted over REST (``POST
  /api/kernels/<id>/interrupt``): the call returns within a few seconds of the timeout with
  exit code 1 and ``ERROR: Timeout: ...``, and the kernel keeps its variables for the next
  call. (AutoGen's timeout only stopped waiting; the kernel went on running the block.) A
  kernel that ignores the interrupt, or dies, is restarted and the result says so. A cancelled
  chat interrupts the block too.
* One ``ERROR:`` prefix on failures (AutoGen wrote ``ERROR: ERROR: ...``); output printed
  before an error is kept.
* ``sh``/``bash`` blocks run as shell scripts (IPython's ``%%bash``); AutoGen sent them to the
  kernel as Python. Other languages the kernel does not speak are refused.
* The kernel starts in ``output_dir`` when the gateway runs on this machine
  (``LocalJupyterServer``: its ``kernel_root``), so files the code writes land next to the
  saved images; on another gateway it starts where that gateway puts kernels. The default
  ``output_dir`` is ``coding``, a dedicated folder created on demand (AutoGen: ``.``); a folder
  holding a cache, a virtualenv, parley's sources or a git repository is refused
  (``UnsafeWorkDirError``), as for the command-line executors.
* :meth:`restart` closes the old websocket (AutoGen leaked it); :meth:`stop` deletes the kernel
  and is also called at interpreter exit. Calls are serialised: one block runs at a time.
* The ``jupyter_server`` may be any :class:`JupyterConnectable` (a server object) or a
  :class:`JupyterConnectionInfo`; a server the executor is given is not stopped by it, unless
  passed as ``owned_server`` (parley only: the factory's ``"jupyter-local"``).
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Protocol, runtime_checkable

from .._blocks import DEFAULT_WORK_DIR
from ._kernel_executor import KernelExecutor
from ._kernel_messages import CellEnd, CellOutcome, run_cell
from ._results import checked_output_dir
from .base import JupyterConnectable, JupyterConnectionInfo
from .jupyter_client import JupyterClient, JupyterKernelClient

__all__ = ["JupyterCodeExecutor"]


_READY_SECONDS = 60.0


@runtime_checkable
class _Stoppable(Protocol):
    def stop(self) -> None: ...


def _kernel_path(server: object, output_dir: Path) -> str | None:
    """Where, relative to the gateway's ``kernel_root``, a kernel starts in ``output_dir``;
    None if the server does not share this machine's folders."""
    root = getattr(server, "kernel_root", None)
    if not isinstance(root, Path):
        return None
    try:
        return output_dir.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


class JupyterCodeExecutor(KernelExecutor):
    """Runs code blocks in one kernel of a Jupyter Kernel Gateway (the module's rules)."""

    def __init__(
        self,
        jupyter_server: JupyterConnectable | JupyterConnectionInfo,
        kernel_name: str = "python3",
        timeout: int = 60,
        output_dir: Path | str = Path(DEFAULT_WORK_DIR),
        *,
        owned_server: bool = False,
    ) -> None:
        """Start a kernel of ``kernel_name`` and connect to it.

        ``owned_server`` (parley only): stop ``jupyter_server`` with this executor.
        """
        if timeout < 1:
            raise ValueError("Timeout must be greater than or equal to 1.")
        if isinstance(jupyter_server, JupyterConnectable):
            info = jupyter_server.connection_info
        elif isinstance(jupyter_server, JupyterConnectionInfo):
            info = jupyter_server
        else:
            raise ValueError(
                "jupyter_server must be a JupyterConnectable or JupyterConnectionInfo."
            )
        self._output_dir = checked_output_dir(output_dir)
        self._server: _Stoppable | None = None
        if owned_server:
            if not isinstance(jupyter_server, _Stoppable):
                raise ValueError("owned_server=True needs a server with a stop() method.")
            self._server = jupyter_server
        self._client = JupyterClient(info)
        specs = self._client.list_kernel_specs().get("kernelspecs", {})
        if kernel_name not in specs:
            raise ValueError(f"Kernel {kernel_name} is not installed.")
        self._kernel_name = kernel_name
        self._timeout = timeout
        spec = specs[kernel_name].get("spec") or {}
        self._language = str(spec.get("language", "python")).lower()
        self._lock = threading.RLock()
        self._code_running = contextlib.ExitStack()
        self._kernel_id: str | None = None
        self._kernel: JupyterKernelClient | None = None
        path = _kernel_path(jupyter_server, self._output_dir)
        self._launch(lambda: self._start(kernel_name, path))

    @property
    def timeout(self) -> int:
        """Seconds each block may run before it is interrupted."""
        return self._timeout

    @property
    def output_dir(self) -> Path:
        """Where images and HTML are saved (and, on a local gateway, where the kernel runs)."""
        return self._output_dir

    def run_cell(self, code: str, *, shell: bool) -> CellOutcome:
        """One cell within the timeout (for ``_results.execute_blocks``)."""
        assert self._kernel is not None
        return run_cell(self._kernel, code, self._timeout, shell=shell)

    def recover(self, end: CellEnd) -> None:
        """A working kernel after a stuck or dead one (for ``_results.execute_blocks``): the
        gateway restarts a dead kernel itself, so that one is only reconnected to."""
        with self._lock:
            if end != "died":
                self.restart()
                return
            self._disconnect()
            try:
                self._connect()
            except TimeoutError:  # the gateway did not manage: restart it ourselves
                self.restart()

    def restart(self) -> None:
        """Restart the kernel: its variables are lost. The old websocket is closed."""
        with self._lock:
            if self._kernel_id is None:
                raise ValueError("This JupyterCodeExecutor was stopped; create a new one.")
            self._disconnect()
            self._client.restart_kernel(self._kernel_id)
            self._connect()

    # -- the steps of KernelExecutor ----------------------------------------------------------------

    def _kernel_ready(self) -> bool:
        return self._kernel is not None

    def _output_folder(self) -> Path:
        return self._output_dir

    def _shutdown(self) -> None:
        """Delete the kernel (a JupyterGatewayError raised by execute_code_blocks means the
        gateway is gone), and stop an owned server."""
        self._disconnect()
        kernel_id, self._kernel_id = self._kernel_id, None
        try:
            if kernel_id is not None:
                with contextlib.suppress(OSError):  # the gateway may be gone already
                    self._client.delete_kernel(kernel_id)
        finally:
            server, self._server = self._server, None
            if server is not None:
                server.stop()

    def _start(self, kernel_name: str, path: str | None) -> None:
        self._kernel_id = self._client.start_kernel(kernel_name, path=path)
        self._connect()

    def _connect(self) -> None:
        assert self._kernel_id is not None
        kernel = self._client.get_kernel_client(self._kernel_id)
        if not kernel.wait_for_ready(_READY_SECONDS):
            kernel.stop()
            raise TimeoutError(
                f"Kernel {self._kernel_id} ({self._kernel_name}) did not answer within "
                f"{_READY_SECONDS:g} s."
            )
        self._kernel = kernel

    def _disconnect(self) -> None:
        kernel, self._kernel = self._kernel, None
        if kernel is not None:
            kernel.stop()
