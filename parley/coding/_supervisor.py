"""parley's side of the block supervisors (``_reaper.py`` has their side and the design).

:func:`start_block` starts a program under a supervisor forked by this process's supervisor
server (started on first use, and again after a fork of this process or the server's death) and
returns a :class:`Block` to watch and stop it, plus the read ends of its stdout and stderr.
Where the server cannot run (no ``SOCK_SEQPACKET`` Unix sockets, as on macOS) the program runs
as a plain child in its own process group instead: the block's processes that stay in the group
are contained, those that leave it are not.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from .._core.runtime import after_fork, keep_until_exit

__all__ = ["Block", "readable", "start_block"]


def readable(selectable: socket.socket, timeout: float) -> bool:
    """Whether ``selectable`` has something to read within ``timeout`` seconds (0: now).

    ``poll``, not ``select``: a long-lived process may hold descriptors numbered past the 1024
    ``select`` can watch."""
    poller = select.poll()
    poller.register(selectable, select.POLLIN)
    return bool(poller.poll(max(timeout, 0.0) * 1000))


_REAPER = str(Path(__file__).with_name("_reaper.py"))
_SERVER_ENV_KEYS = ("PATH", "LANG", "LC_ALL")  # the server needs nothing else, holds no secret


class Block:
    """A running program; ``selectable`` (if not None) becomes readable when it has news."""

    selectable: socket.socket | None = None

    def on_readable(self) -> None:
        """Read the news that made ``selectable`` readable."""

    def finished(self) -> bool:
        raise NotImplementedError

    def exit_code(self) -> int:
        """As ``Popen.returncode``: negative when a signal killed the program."""
        raise NotImplementedError

    def stop(self, within: float) -> None:
        """End the program and everything it started (SIGTERM, a grace, SIGKILL); return once
        they are gone, killing harder after ``within`` seconds."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what watching the block held."""


class _Supervised(Block):
    def __init__(self, control: socket.socket, program: str) -> None:
        self.selectable = control
        self._program = program
        self._pid: int | None = None
        self._code: int | None = None

    def on_readable(self) -> None:
        assert self.selectable is not None
        try:
            news = self.selectable.recv(4096)
        except OSError:
            news = b""
        if not news:  # the supervisor is gone; if without a word, it was killed
            self._code = -signal.SIGKILL if self._code is None else self._code
            self.close()
            return
        kind, _, value = news.partition(b" ")
        if kind == b"pid":
            self._pid = int(value)
        elif kind == b"exit":
            self._code = int(value)
        elif kind == b"signal":
            self._code = -int(value)
        else:  # ["error", errno, strerror, filename]: the program could not be started
            _, number, message, filename = json.loads(news)
            raise OSError(number, message, filename or self._program)

    def finished(self) -> bool:
        return self._code is not None

    def exit_code(self) -> int:
        assert self._code is not None
        return self._code

    def stop(self, within: float) -> None:
        if self.finished() or self.selectable is None:
            return
        try:
            self.selectable.send(b"stop")
        except OSError:
            pass
        deadline = time.monotonic() + within
        while not self.finished() and self.selectable is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._kill()
                return
            if readable(self.selectable, remaining):
                self.on_readable()

    def _kill(self) -> None:
        # The supervisor did not manage (stopped, say): kill it and its session; what it had
        # adopted goes to the server, which kills it.
        if self._pid is not None:
            for kill in (os.killpg, os.kill):
                try:
                    kill(self._pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        self._code = -signal.SIGKILL

    def close(self) -> None:
        if self.selectable is not None:
            self.selectable.close()  # end of file: a supervisor still running ends its block
            self.selectable = None


class _Unsupervised(Block):
    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process

    def finished(self) -> bool:
        if self._process.poll() is None:
            return False
        _signal_group(self._process.pid, signal.SIGKILL)  # what it left in its group
        return True

    def exit_code(self) -> int:
        return self._process.wait()

    def stop(self, within: float) -> None:
        if self.finished():
            return
        _signal_group(self._process.pid, signal.SIGTERM)
        try:
            self._process.wait(min(within, 0.25))
        except subprocess.TimeoutExpired:
            pass
        _signal_group(self._process.pid, signal.SIGKILL)
        self._process.wait()


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class _Server:
    """This process's supervisor server; ``None`` from :meth:`socket` where it cannot run."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._unavailable = not (hasattr(socket, "send_fds") and hasattr(socket, "AF_UNIX"))

    def forget_parents(self) -> None:
        """In a forked child: the parent's server is not ours to end (nor its lock, which a
        thread of the parent may have held). Kept referenced, so that collecting them neither
        closes anything nor warns; the child starts its own server when it needs one."""
        keep_until_exit(self._socket, self._process)
        self.lock = threading.Lock()
        self._socket = self._process = None

    def start(self, request: bytes, out: int, err: int) -> socket.socket | None:
        """Have a supervisor start the block ``request`` describes, writing to ``out`` and
        ``err``; the control socket of the block, or None where no server can run."""
        with self.lock:
            for attempt in (1, 2):
                server = self._ensure()
                if server is None:
                    return None
                control, remote = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                try:
                    with remote:
                        socket.send_fds(server, [request], [out, err, remote.fileno()])
                    return control
                except OSError:
                    control.close()
                    if attempt == 2:
                        raise
                    self._forget()  # it died (killed, say): start another
            return None

    def _ensure(self) -> socket.socket | None:
        if self._unavailable:
            return None
        alive = self._process is not None and self._process.poll() is None
        if self._socket is not None and alive:
            return self._socket
        self._forget()
        try:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        except OSError:
            self._unavailable = True
            return None
        env = {k: os.environ[k] for k in _SERVER_ENV_KEYS if k in os.environ}
        with theirs:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", _REAPER],
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd="/",
                start_new_session=True,  # the terminal's Ctrl-C is parley's to handle
            )
        self._socket = ours
        return ours

    def _forget(self) -> None:
        server, process = self._socket, self._process
        self._socket = self._process = None
        if server is not None:
            server.close()  # end of file: the server exits
        if process is not None:
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def close(self) -> None:
        """At exit: let the server go (blocks still running are ended by their supervisors)."""
        with self.lock:
            self._forget()


_server = _Server()
atexit.register(_server.close)
after_fork(_server.forget_parents)


def start_block(
    executable: str,
    argv: list[str],
    cwd: str | os.PathLike[str] | None,
    env: Mapping[str, str],
    *,
    sandboxed: bool = False,
) -> tuple[Block, int, int]:
    """Start ``argv`` (the file ``executable``) in ``cwd`` with exactly ``env``; its block and
    the read ends of its stdout and stderr. ``sandboxed``: the program is a sandbox builder
    (bubblewrap) that a root supervisor must leave the capability to build it."""
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    request = {
        "executable": executable,
        "argv": argv,
        "cwd": os.path.abspath(cwd) if cwd is not None else os.getcwd(),
        "env": dict(env),
        "sandboxed": sandboxed,
    }
    try:
        control = _server.start(json.dumps(request).encode(), out_write, err_write)
        if control is not None:
            return _Supervised(control, argv[0]), out_read, err_read
        process = subprocess.Popen(
            argv,
            executable=executable,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out_write,
            stderr=err_write,
            start_new_session=True,
        )
        return _Unsupervised(process), out_read, err_read
    except BaseException:
        os.close(out_read)
        os.close(err_read)
        raise
    finally:
        os.close(out_write)
        os.close(err_write)
