"""Run one program the way parley runs generated code: contained, bounded, with a clean env.

This is the single place where the host-side execution policy lives; the legacy
``code_utils.execute_code`` and :class:`LocalCommandLineCodeExecutor` both go through it, and
the Docker executor caps its output with the same :class:`CappedBuffer`.

The policy:

* The program runs under a supervisor (``_reaper.py`` has the design, ``_supervisor.py`` this
  side of it), Linux's child subreaper: every process it starts stays the supervisor's
  descendant however it detaches (``setsid``, double fork), and all of them are killed when the
  program ends, at the deadline, when the caller is cancelled (``parley._core.runtime``: a cancelled
  chat, Ctrl-C in a sync chat) and when parley itself dies — the supervisor's control socket
  then reaches end of file. Nothing a block starts outlives it. Supervisors are forked by one
  server process per parley process, so a block starts about as fast as a bare subprocess.
  AutoGen waited for a timed-out program to finish on its own.
* At the deadline or on cancellation: SIGTERM to every process of the block, SIGKILL after a
  brief grace; the call returns (or raises :class:`ExecutionCancelledError`) within a second.
* stdout and stderr are read concurrently (a chatty program never deadlocks on a full pipe) and
  each is capped at ``max_output`` bytes; the rest is counted, not stored, and reported by a
  visible marker. Output produced before a timeout is kept.
* The environment is an allowlist (:func:`safe_env`): API keys and other secrets of the parent
  process are never inherited. stdin is ``/dev/null``. While code runs, this process is
  non-dumpable, so the code cannot read parley's environment or memory through
  ``/proc/<pid>/environ`` or ``/proc/<pid>/mem``; when parley runs as root, the code also runs
  without the capabilities that would bypass that (``CAP_SYS_PTRACE`` and the like).
* Running code on the host is not isolation: the first run warns once per process
  (:class:`~parley.exceptions.UnsandboxedExecutionWarning`). Docker is a sandbox; so is
  ``sandbox=`` here (a :class:`Sandbox` such as ``_bwrap.BwrapSandbox``): the program found on
  the block's ``PATH`` then runs inside the command line it returns, still under the
  supervisor, and such a run does not warn.
* No signals are used for timing (no ``signal.alarm``), so it works from any thread; async code
  calls it through ``parley._core.runtime.run_in_thread``, as the agents do with executors.

POSIX only (process groups, ``selectors`` on pipes); parley does not run code on Windows hosts.
The subreaper and the /proc walk are Linux's; elsewhere only the process group is contained.
"""

from __future__ import annotations

import codecs
import errno
import os
import selectors
import shutil
import threading
import time
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .._core.runtime import CancelToken, current_token
from ..exceptions import ExecutionCancelledError, UnsandboxedExecutionWarning
from ._reaper import PR_GET_DUMPABLE, PR_SET_DUMPABLE, prctl
from ._supervisor import Block, start_block

__all__ = [
    "ENV_ALLOWLIST",
    "MAX_OUTPUT_BYTES",
    "CappedBuffer",
    "ProcessResult",
    "Sandbox",
    "run",
    "run_program",
    "safe_env",
    "while_code_runs",
]

MAX_OUTPUT_BYTES = 256 * 1024
"""Per-stream output cap. Large enough for any useful log, small enough for an LLM's context."""

TIMEOUT_EXIT_CODE = 124  # what coreutils' `timeout` returns, and what AutoGen's executors report

# Variables a program needs to behave normally, none of which hold credentials. Proxy variables
# are left out on purpose: their URLs often embed a user and password.
ENV_ALLOWLIST = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ",
        "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_NUMERIC", "LC_TIME",
        "TMPDIR", "TEMP", "TMP", "PYTHONIOENCODING", "VIRTUAL_ENV",
        # Paths to CA bundles: TLS (pip install, downloads) fails behind intercepting proxies
        # without them, and they are file names, not secrets.
        "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS",
        # Windows cannot start Python without some of these.
        "SYSTEMROOT", "SYSTEMDRIVE", "COMSPEC", "PATHEXT", "WINDIR", "USERPROFILE",
    }
)  # fmt: skip

_STOP_SECONDS = 2.0  # for the supervisor to end the block after a stop (it needs ~0.25 s)
_DRAIN_SECONDS = 1.0  # to collect output still in the pipes once the block is dead
_TICK_SECONDS = 0.05  # how often an idle wait re-checks the exit and the cancel token
_CHUNK = 65536


class Sandbox(Protocol):
    """Runs a program somewhere other than on the host as it is."""

    def command(self, argv: list[str], env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
        """The command line and environment that run ``argv`` (its program's absolute path
        first) with ``env`` in the sandbox."""
        ...


@dataclass(frozen=True)
class ProcessResult:
    """How a run ended. ``exit_code`` is 124 on a timeout, negative if killed by a signal."""

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool


def safe_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent's allowlisted variables, ``PYTHONUNBUFFERED=1``, then ``extra`` on top.

    ``PYTHONUNBUFFERED`` makes Python write as it prints, so output printed before a timeout
    is not lost in the killed child's buffer, and stdout/stderr keep their real order.
    """
    env = {key: value for key, value in os.environ.items() if key.upper() in ENV_ALLOWLIST}
    env["PYTHONUNBUFFERED"] = "1"
    if extra:
        env.update(extra)
    return env


def _truncated(head: bytes, dropped: int) -> str:
    """``head`` as text plus a marker ``"\\n[... output truncated: N more bytes ...]"`` counting
    the ``dropped`` bytes that followed it."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    # final=False leaves out a character cut in half at the limit; it counts as dropped.
    text = decoder.decode(head, final=False)
    cut, _ = decoder.getstate()
    return f"{text}\n[... output truncated: {dropped + len(cut)} more bytes ...]"


class CappedBuffer:
    """Keeps the first ``limit`` bytes fed to it and counts the others."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._chunks: list[bytes] = []
        self._kept = 0
        self._dropped = 0

    def feed(self, chunk: bytes) -> None:
        room = self._limit - self._kept
        if room > 0:
            self._chunks.append(chunk[:room])
            self._kept += min(room, len(chunk))
        self._dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        data = b"".join(self._chunks)
        if not self._dropped:
            return data.decode("utf-8", "replace")
        return _truncated(data, self._dropped)


def _find_program(program: str, env: Mapping[str, str], cwd: str | os.PathLike[str] | None) -> str:
    """The file ``program`` names, found as ``Popen`` would on the block's own ``PATH``; the
    same ``FileNotFoundError`` / ``PermissionError`` when there is none."""
    if os.sep in program:
        path = Path(cwd or ".", program)
        if not path.exists():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", program)
        if path.is_dir() or not os.access(path, os.X_OK):
            raise PermissionError(errno.EACCES, "Permission denied", program)
        return str(path.absolute())
    found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", program)
    return os.path.abspath(found)


# -- this process is non-dumpable while code runs (prctl PR_SET_DUMPABLE) ---------------------

_dumpable_lock = threading.Lock()
_running = 0  # local runs in progress
_restore_dumpable: int | None = None
_warned = False


@contextmanager
def _while_code_runs(warn: bool = True) -> Iterator[None]:
    """Keep this process non-dumpable while at least one block runs; warn on the first run
    with ``warn`` (generated code, not sandboxed)."""
    global _running, _restore_dumpable, _warned
    with _dumpable_lock:
        if warn and not _warned:
            _warned = True
            warnings.warn(
                "parley is running generated code on this machine, without a sandbox: it can do "
                "anything this user can. Use a DockerCommandLineCodeExecutor (or "
                '"use_docker": True), or on Linux LocalCommandLineCodeExecutor(sandbox=True) '
                "(bubblewrap), to isolate it.",
                UnsandboxedExecutionWarning,
                stacklevel=1,  # the caller is a worker thread's frame; this line is as good
            )
        if _running == 0:
            before = prctl(PR_GET_DUMPABLE)
            if before is not None and before > 0:
                prctl(PR_SET_DUMPABLE, 0)
                _restore_dumpable = before
        _running += 1
    try:
        yield
    finally:
        with _dumpable_lock:
            _running -= 1
            if _running == 0 and _restore_dumpable is not None:
                # Debuggers and profilers work again once no generated code is running.
                prctl(PR_SET_DUMPABLE, _restore_dumpable)
                _restore_dumpable = None


def run(
    argv: list[str],
    *,
    cwd: str | os.PathLike[str] | None,
    timeout: float,
    env: Mapping[str, str] | None,
    max_output: int = MAX_OUTPUT_BYTES,
    generated: bool = True,
    sandbox: Sandbox | None = None,
) -> ProcessResult:
    """Run ``argv`` to completion or to ``timeout`` seconds under the module's policy, in
    ``sandbox`` if one is given.

    ``env=None`` means :func:`safe_env()`, never the parent's full environment. Raises
    ``FileNotFoundError`` if the program does not exist, and :class:`ExecutionCancelledError`
    if the calling step was cancelled (its processes are gone by then). ``generated=False``
    says the program is parley's own (``pip install`` of a function's requirements), not
    generated code: it is contained all the same, but the unsandboxed-code warning is not given.
    """
    environment = dict(env) if env is not None else safe_env()
    executable = _find_program(argv[0], environment, cwd)
    if sandbox is not None:
        argv, environment = sandbox.command([executable, *argv[1:]], environment)
        executable = argv[0]
    token = current_token()
    deadline = time.monotonic() + timeout
    with _while_code_runs(warn=generated and sandbox is None):
        block, out, err = start_block(
            executable, argv, cwd, environment, sandboxed=sandbox is not None
        )
        streams = {out: CappedBuffer(max_output), err: CappedBuffer(max_output)}
        ending = "exited"
        try:
            with selectors.DefaultSelector() as selector:
                for fd in streams:
                    selector.register(fd, selectors.EVENT_READ)
                if block.selectable is not None:
                    selector.register(block.selectable, selectors.EVENT_READ)
                ending = _pump_until_exit(block, selector, streams, deadline, token)
                if ending != "exited":
                    block.stop(_STOP_SECONDS)
                _drain(block, selector, streams, time.monotonic() + _DRAIN_SECONDS)
        finally:
            # Also reached on KeyboardInterrupt: the block must not outlive the call.
            block.stop(_STOP_SECONDS)
            block.close()
            for fd in streams:
                os.close(fd)
    if ending == "cancelled":
        raise ExecutionCancelledError("the code block was stopped: its chat was cancelled")
    code = TIMEOUT_EXIT_CODE if ending == "timed out" else block.exit_code()
    return ProcessResult(
        exit_code=code,
        stdout=streams[out].text(),
        stderr=streams[err].text(),
        timed_out=ending == "timed out",
    )


def run_program(
    argv: list[str],
    *,
    cwd: str | os.PathLike[str] | None,
    timeout: float,
    env: Mapping[str, str] | None,
    sandbox: Sandbox | None = None,
) -> ProcessResult:
    """:func:`run`, with a program that cannot be started reported as a shell reports it: exit
    code 127 (not found) or 126 (not executable) and a line on stderr, so that a missing
    interpreter (``node``, ``pwsh``) is a result the model can read, not an exception."""
    program = argv[0]
    try:
        return run(argv, cwd=cwd, timeout=timeout, env=env, sandbox=sandbox)
    except FileNotFoundError as error:
        if error.filename != program:
            raise  # the work dir itself is gone
        return ProcessResult(127, "", f"{program}: command not found\n", timed_out=False)
    except PermissionError:
        return ProcessResult(126, "", f"{program}: permission denied\n", timed_out=False)


def _read_ready(
    block: Block,
    selector: selectors.BaseSelector,
    streams: dict[int, CappedBuffer],
    wait: float,
) -> None:
    for key, _ in selector.select(wait):
        if key.fd not in streams:  # the block's news (its supervisor's control socket)
            block.on_readable()
            if block.finished() or block.selectable is None:
                selector.unregister(key.fileobj)
            continue
        fd = key.fd
        chunk = os.read(fd, _CHUNK)
        if chunk:
            streams[fd].feed(chunk)
        else:
            selector.unregister(fd)


def _pump_until_exit(
    block: Block,
    selector: selectors.BaseSelector,
    streams: dict[int, CappedBuffer],
    deadline: float,
    token: CancelToken | None,
) -> str:
    """Read output until the block ends: ``"exited"``, ``"timed out"`` or ``"cancelled"``."""
    while not block.finished():
        if token is not None and token.cancelled:
            return "cancelled"
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "timed out"
        _read_ready(block, selector, streams, min(remaining, _TICK_SECONDS))
    return "exited"


def _drain(
    block: Block,
    selector: selectors.BaseSelector,
    streams: dict[int, CappedBuffer],
    until: float,
) -> None:
    """Collect what is left in the pipes; bounded, in case something still holds them."""
    while (
        any(fd in streams for fd in selector.get_map())
        and (remaining := until - time.monotonic()) > 0
    ):
        _read_ready(block, selector, streams, remaining)


while_code_runs = _while_code_runs
"""The Jupyter executors and servers hold this for a kernel's whole life: a kernel runs code at
any time."""
