"""The supervisors local code blocks run under, so that nothing a block starts outlives it.

parley starts this file once per process (``python -I -S _reaper.py``: a file run by path,
stdlib only, so it starts fast and never imports the user's site-packages) with a minimal
environment and its stdin a ``SOCK_SEQPACKET`` socket whose other end only parley holds. This
*server* makes itself non-dumpable (it holds the environments of the blocks it starts) and waits
for requests: a JSON ``{"executable", "argv", "cwd", "env", "sandboxed"}`` carrying three
descriptors, the block's stdout and stderr pipes and a *control* socket. For each one it forks
a *supervisor*, which:

* starts a new session and makes itself the *child subreaper* (Linux
  ``prctl(PR_SET_CHILD_SUBREAPER)``): every process the block starts, however it detaches
  (``setsid``, a double fork), is re-parented to the supervisor when its parent dies, and stays
  its descendant. As root, it also drops the capabilities that would let the block read
  parley's memory despite its being non-dumpable (a ``"sandboxed"`` request keeps
  ``CAP_SYS_ADMIN``: its program is bubblewrap, which needs it to build the sandbox and drops
  every capability before the code runs);
* sends ``pid <n>`` on the control socket, then runs the program (stdin ``/dev/null``; the
  request names its file, ``executable``, found by parley on the block's own ``PATH``);
* waits for one of: the program exits (every process it left running is killed with SIGKILL);
  a byte on the control socket (parley's deadline passed, or the chat was cancelled: SIGTERM to
  every descendant, a short grace, then SIGKILL); end of file on it (parley died: the same);
* once its last descendant is reaped, sends ``exit <code>`` or ``signal <n>`` and exits.

Forking a supervisor costs about a millisecond, where starting a Python for each block cost
tens. The server is a subreaper too: a process re-parented to it can only come from a supervisor
that died before its block (code may kill its own supervisor), and is killed at once. When
parley's end of the server socket closes (parley exited or died), the server exits; each
supervisor sees its own control socket close and ends its block.
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import time
from typing import NoReturn

try:
    # The C module: `signal` itself imports enum, ~5 ms of the server's start.
    import _signal as signal  # type: ignore[import-not-found]
except ImportError:  # another Python implementation
    import signal

PR_GET_DUMPABLE, PR_SET_DUMPABLE = 3, 4
_PR_SET_CHILD_SUBREAPER = 36
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
# Capabilities with which root code could read parley's memory despite its being non-dumpable:
# CAP_SYS_MODULE, CAP_SYS_RAWIO, CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_PERFMON, CAP_BPF.
_MEMORY_READING_CAPS = (16, 17, 19, 21, 38, 39)
# What a sandboxed block's program (bubblewrap, run as root) needs of them to build the sandbox:
# CAP_SYS_ADMIN, for namespaces and mounts. It drops every capability before the code runs.
_SANDBOX_BUILDING_CAPS = (21,)
_STOP_GRACE_SECONDS = 0.25  # between SIGTERM and SIGKILL when parley asks for a stop
_MAX_REQUEST = 1 << 20
# Signals a program would otherwise inherit as ignored or handled from this process.
_RESET_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGCHLD, signal.SIGXFSZ}


_libc: object = None


def prctl(option: int, value: int = 0) -> int | None:
    """Linux's ``prctl(option, value)``; None where there is no such call (then parley kills
    the block's process group, and that is all the containment there is)."""
    global _libc
    try:
        if _libc is None:
            import ctypes

            _libc = ctypes.CDLL(None, use_errno=True)
        return int(_libc.prctl(option, value, 0, 0, 0))  # type: ignore[attr-defined]
    except (OSError, AttributeError):
        return None


def _children() -> list[int]:
    """This process's children (from /proc; empty where there is none)."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as listing:
            return [int(pid) for pid in listing.read().split()]
    except OSError:
        return [pid for pid, parent in _parents().items() if parent == me]


def _parents() -> dict[int, int]:
    found: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    data = stat.read()
            except OSError:
                continue  # it has just exited
            # Field 4, after the command name in parentheses (which may itself hold ") ").
            found[int(entry)] = int(data[data.rindex(b")") + 2 :].split()[1])
    return found


def _descendants() -> list[int]:
    parents = _parents()
    below: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        below.setdefault(parent, []).append(pid)
    found: list[int] = []
    stack = list(below.get(os.getpid(), ()))
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(below.get(pid, ()))
    return found


def _signal_all(sig: int) -> None:
    for pid in _descendants():
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _wakeup_pipe() -> int:
    """A fresh pipe that signals write to, so that they wake select(); its read end."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    os.set_blocking(write_end, False)
    signal.set_wakeup_fd(write_end)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    return read_end


def _drain(fd: int) -> bytes:
    try:
        return os.read(fd, 512)
    except BlockingIOError:
        return b""


# -- the supervisor of one block (a forked child of the server) ---------------------------------


def _supervise(request: dict[str, object], out: int, err: int, control: socket.socket) -> None:
    os.setsid()
    prctl(_PR_SET_CHILD_SUBREAPER, 1)
    if os.geteuid() == 0:
        prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
        kept = _SANDBOX_BUILDING_CAPS if request.get("sandboxed") else ()
        for cap in _MEMORY_READING_CAPS:
            if cap not in kept:
                prctl(_PR_CAPBSET_DROP, cap)  # fails harmlessly on older kernels
    wake = _wakeup_pipe()
    signal.signal(signal.SIGTERM, lambda *_: None)  # a stop request, like a byte on control
    control.sendall(b"pid %d" % os.getpid())
    executable = str(request["executable"])
    argv = [str(a) for a in request["argv"]]  # type: ignore[attr-defined]
    env = {str(k): str(v) for k, v in request["env"].items()}  # type: ignore[attr-defined]
    try:
        os.chdir(str(request["cwd"]))
    except OSError as error:
        _refuse(control, error, str(request["cwd"]))
    try:
        program = os.posix_spawn(
            executable,
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, out, 1),
                (os.POSIX_SPAWN_DUP2, err, 2),
            ],
            setsigdef=_RESET_SIGNALS,
        )
    except OSError as error:
        _refuse(control, error, argv[0])
    os.close(out)  # the block's processes hold the pipes now: they close when the last one ends
    os.close(err)
    control.sendall(_status_of(_wait(program, wake, control)))
    os._exit(0)


def _refuse(control: socket.socket, error: OSError, filename: str) -> NoReturn:
    control.sendall(json.dumps(["error", error.errno, error.strerror, filename]).encode())
    os._exit(0)


def _wait(program: int, wake: int, control: socket.socket) -> int:
    """Run until the block and everything it started are gone; the program's wait status."""
    status: int | None = None
    stopping = False
    kill_at: float | None = None
    watched: list[int | socket.socket] = [wake, control]
    while True:
        while True:  # reap whatever has ended
            try:
                pid, raw = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return status if status is not None else 0
            if pid == 0:
                break
            if pid == program:
                status = raw
        now = time.monotonic()
        if (status is not None and not stopping) or (kill_at is not None and now >= kill_at):
            _signal_all(signal.SIGKILL)  # what the program left, or what outlived the grace
            timeout: float | None = 0.01  # killed processes take a moment to die
        else:
            timeout = None if kill_at is None else kill_at - now
        readable, _, _ = select.select(watched, [], [], timeout)
        stop = signal.SIGTERM in _drain(wake) if wake in readable else False
        if control in readable:
            try:
                if not control.recv(64):
                    watched.remove(control)  # end of file: parley is gone
            except OSError:
                watched.remove(control)
            stop = True
        if stop and not stopping:
            stopping, kill_at = True, time.monotonic() + _STOP_GRACE_SECONDS
            _signal_all(signal.SIGTERM)


def _status_of(status: int) -> bytes:
    if os.WIFSIGNALED(status):
        return b"signal %d" % os.WTERMSIG(status)
    return b"exit %d" % (os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


# -- the server -----------------------------------------------------------------------------------


def serve(server: socket.socket) -> None:
    prctl(PR_SET_DUMPABLE, 0)
    prctl(_PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    wake = _wakeup_pipe()
    supervisors: set[int] = set()
    while True:
        readable, _, _ = select.select([server.fileno(), wake], [], [])
        if wake in readable:
            _drain(wake)
            _reap(supervisors)
        if server.fileno() in readable:
            try:
                data, fds, _, _ = socket.recv_fds(server, _MAX_REQUEST, 3)
            except OSError:
                data, fds = b"", []
            if not data:
                os._exit(0)  # parley is gone; each supervisor ends its block on its own
            if len(fds) != 3:
                for fd in fds:
                    os.close(fd)
                continue
            pid = os.fork()
            if pid == 0:
                try:
                    server.close()
                    os.close(wake)
                    control = socket.socket(fileno=fds[2])
                    _supervise(json.loads(data), fds[0], fds[1], control)
                finally:
                    os._exit(1)
            supervisors.add(pid)
            for fd in fds:
                os.close(fd)


def _reap(supervisors: set[int]) -> None:
    """Collect ended children; kill what a dead supervisor left to this server."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            break
        supervisors.discard(pid)
    for pid in _children():
        if pid not in supervisors:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


if __name__ == "__main__":
    serve(socket.socket(fileno=sys.stdin.fileno()))
