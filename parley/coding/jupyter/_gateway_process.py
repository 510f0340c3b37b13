"""The kernel gateway process of a ``LocalJupyterServer``: started, watched, drained, stopped.

The gateway runs as a block of parley's process supervisors (``parley.coding._supervisor``,
the same as a local code block): every process it starts — each kernel (``jupyter_client``
starts kernels in sessions of their own), and whatever code in a kernel starts, however it
detaches — stays the supervisor's descendant, and all of them are killed when the gateway is
stopped, and when parley itself dies. The block's stdout and stderr are read by one thread
(the first 64 KiB of each are kept, for the error of a gateway that does not start; the rest is
read and dropped, so the gateway never blocks on a full pipe).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import threading
from collections.abc import Mapping

from .._process import CappedBuffer
from .._supervisor import Block, readable, start_block

__all__ = ["GatewayProcess"]

_KEPT_BYTES = 64 * 1024
_CHUNK = 65536
_STOP_SECONDS = 5.0  # the supervisor kills with SIGKILL a quarter-second after SIGTERM
_JOIN_SECONDS = 5.0


class GatewayProcess:
    """A program run under a supervisor, its output drained in the background."""

    def __init__(self, executable: str, argv: list[str], cwd: str, env: Mapping[str, str]) -> None:
        self._block: Block
        self._block, out, err = start_block(executable, argv, cwd, env)
        self._fds = (out, err)
        self._buffers = {out: CappedBuffer(_KEPT_BYTES), err: CappedBuffer(_KEPT_BYTES)}
        self._reader = threading.Thread(
            target=self._drain, name="parley-jupyter-gateway-output", daemon=True
        )
        self._reader.start()

    def running(self) -> bool:
        """Whether the program is still running (reads the supervisor's news, never waits)."""
        selectable = self._block.selectable
        if selectable is not None and readable(selectable, 0):
            self._block.on_readable()
        return not self._block.finished()

    def exit_code(self) -> int | None:
        """The exit code (negative: killed by that signal), None while it runs."""
        return self._block.exit_code() if not self.running() else None

    def output(self) -> str:
        """What the program wrote so far (stderr, then stdout), each cut at 64 KiB."""
        out, err = self._fds
        return (self._buffers[err].text() + self._buffers[out].text()).strip()

    def stop(self) -> None:
        """End the program and every process it started; return once they are gone."""
        self._block.stop(_STOP_SECONDS)
        self._block.close()
        self._reader.join(_JOIN_SECONDS)  # the pipes reach end of file once all are dead
        if not self._reader.is_alive():
            for fd in self._fds:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _drain(self) -> None:
        with selectors.DefaultSelector() as selector:
            for fd in self._fds:
                selector.register(fd, selectors.EVENT_READ)
            while selector.get_map():
                for key, _ in selector.select():
                    try:
                        chunk = os.read(key.fd, _CHUNK)
                    except OSError:
                        chunk = b""
                    if chunk:
                        self._buffers[key.fd].feed(chunk)
                    else:
                        selector.unregister(key.fd)
