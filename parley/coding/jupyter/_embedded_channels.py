"""A kernel this process starts and talks to over ZeroMQ (for ``EmbeddedIPythonCodeExecutor``).

:class:`EmbeddedKernel` is a ``_kernel_messages.KernelChannels``. It uses ``jupyter_client``
(``pip install 'parley[jupyter]'``) this way:

* The kernel is started by an ``AsyncKernelManager`` whose coroutines run on parley's runner
  loop (``parley._core.runtime.run_sync``): ``jupyter_client``'s blocking manager would create an
  event loop in every worker thread that calls it, and never close it.
* The kernel gets parley's minimal environment (``safe_env``: no API keys), starts in the
  executor's ``output_dir``, and its own stdout and stderr go to ``/dev/null`` (ipykernel
  sends what code prints, down to the file descriptors, as messages).
* It listens on Unix sockets (``ipc``) in a private temporary folder (``_socket_folder``),
  which also holds its connection file: no TCP port other local users could connect to, and
  none to race for. The folder is removed when the kernel is shut down.
* Messages are read from the shell and iopub sockets directly, polled together, with the
  sockets' own ``get_msg``: no thread and no event loop is involved in running a cell.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import Any

from ..._core.runtime import CancelToken, run_sync, run_under
from .._process import safe_env
from ._socket_folder import private_socket_folder
from .jupyter_client import INSTALL_HINT

__all__ = ["EmbeddedKernel", "kernel_language"]


def _jupyter_client(module: str = "jupyter_client") -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"EmbeddedIPythonCodeExecutor needs jupyter_client and ipykernel: {INSTALL_HINT}",
            name=error.name,
        ) from error


def kernel_language(kernel_name: str) -> str:
    """The installed kernel spec's language; ValueError if no such kernel is installed."""
    specs = _jupyter_client("jupyter_client.kernelspec").KernelSpecManager()
    if kernel_name not in specs.find_kernel_specs():
        raise ValueError(
            f"Kernel {kernel_name} is not installed. Please first install it with "
            f"`python -m ipykernel install --user --name {kernel_name}`."
        )
    return str(specs.get_kernel_spec(kernel_name).language).lower()


# What the folder holds: "/kernel.json" and the sockets "/kernel-1" ... "/kernel-5".
_NAMES_ROOM = 13


def _on_runner(coro: Coroutine[Any, Any, Any]) -> Any:
    """Await ``coro`` on parley's runner loop to the end, even in a cancelled step: run_sync
    would give up at once there, and a cancelled block still has to be interrupted."""
    return run_under(CancelToken(), run_sync, coro)


class EmbeddedKernel:
    """A running kernel and the client sockets to it."""

    def __init__(self, kernel_name: str, cwd: Path) -> None:
        client_module = _jupyter_client()
        self._zmq = importlib.import_module("zmq")
        self._runtime_dir = private_socket_folder("parley-kernel-", _NAMES_ROOM)
        self._manager = client_module.AsyncKernelManager(
            kernel_name=kernel_name,
            transport="ipc",
            ip=str(Path(self._runtime_dir, "kernel")),
            connection_file=str(Path(self._runtime_dir, "kernel.json")),
        )
        self._client: Any = None
        try:
            _on_runner(
                self._manager.start_kernel(
                    env=safe_env(),
                    cwd=str(cwd),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            self._client = client_module.BlockingKernelClient()
            self._client.load_connection_info(self._manager.get_connection_info())
            self._client.start_channels(
                shell=True, iopub=True, stdin=False, hb=False, control=False
            )
            self._poller = self._zmq.Poller()
            self._sockets = {
                self._client.shell_channel.socket: self._client.shell_channel,
                self._client.iopub_channel.socket: self._client.iopub_channel,
            }
            for socket in self._sockets:
                self._poller.register(socket, self._zmq.POLLIN)
        except BaseException:
            self.shutdown()
            raise

    # -- _kernel_messages.KernelChannels ----------------------------------------------------------

    def send(self, msg_type: str, content: Mapping[str, Any]) -> str:
        message = self._client.session.msg(msg_type, dict(content))
        self._client.shell_channel.send(message)
        return str(message["header"]["msg_id"])

    def receive(self, timeout: float) -> Mapping[str, Any] | None:
        for socket, _ in self._poller.poll(int(timeout * 1000)):
            message: Mapping[str, Any] = self._sockets[socket].get_msg(timeout=0)
            return message
        return None

    def interrupt(self) -> None:
        _on_runner(self._manager.interrupt_kernel())

    def alive(self) -> bool:
        process = getattr(self._manager.provisioner, "process", None)
        return process is not None and process.poll() is None

    # -- lifetime -------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Close the sockets, kill the kernel (its process group) and remove its files."""
        client, self._client = self._client, None
        if client is not None:
            client.stop_channels()
        try:
            if self._manager.has_kernel:
                _on_runner(self._manager.shutdown_kernel(now=True))
        finally:
            shutil.rmtree(self._runtime_dir, ignore_errors=True)
