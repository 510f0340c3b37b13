"""Run one program the way parley runs generated code: contained, bounded, with a clean env.

This is the single place where the host-side execution policy lives; the legacy
``code_utils.execute_code`` and :class:`LocalCommandLineCodeExecutor` both go through it, and
the Docker executor reuses :func:`cap_output`.

The policy:

* The program starts in a new session, so it and everything it spawns share one process group.
* At the deadline the whole group gets SIGTERM, then SIGKILL after a brief grace. AutoGen
  waited for a timed-out program to finish on its own; here nothing of it survives.
* When the program ends on its own, whatever it left running in its group (``server &``) is
  killed too: a code block's processes end with the block.
* stdout and stderr are read concurrently (a chatty program never deadlocks on a full pipe) and
  each is capped at ``max_output`` bytes; the rest is counted, not stored, and reported by a
  visible marker. Output produced before a timeout is kept.
* The environment is an allowlist (:func:`safe_env`): API keys and other secrets of the parent
  process are never inherited. stdin is ``/dev/null``.
* No signals are used for timing (no ``signal.alarm``), so it works from any thread; async code
  calls it through ``asyncio.to_thread``, as the agents do with executors.

POSIX only (process groups, ``selectors`` on pipes); parley does not run code on Windows hosts.
"""

from __future__ import annotations

import codecs
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO

__all__ = [
    "ENV_ALLOWLIST",
    "MAX_OUTPUT_BYTES",
    "ProcessResult",
    "cap_output",
    "run",
    "safe_env",
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

_GRACE_SECONDS = 0.25  # between SIGTERM and SIGKILL at a timeout
_DRAIN_SECONDS = 1.0  # to collect output still in the pipes once the group is dead
_TICK_SECONDS = 0.05  # how often an idle wait re-checks whether the program has exited
_CHUNK = 65536


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


def _marker(dropped: int) -> str:
    return f"\n[... output truncated: {dropped} more bytes ...]"


def _truncated(head: bytes, dropped: int) -> str:
    """``head`` as text plus the marker counting the ``dropped`` bytes that followed it."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    # final=False leaves out a character cut in half at the limit; it counts as dropped.
    text = decoder.decode(head, final=False)
    cut, _ = decoder.getstate()
    return text + _marker(dropped + len(cut))


def cap_output(text: str, limit: int = MAX_OUTPUT_BYTES) -> str:
    """``text`` if its UTF-8 form fits in ``limit`` bytes, else its head and a marker
    ``"\\n[... output truncated: N more bytes ...]"``."""
    if len(text) <= limit // 4:  # fast path: can't exceed the limit even at 4 bytes a char
        return text
    data = text.encode("utf-8", "surrogatepass")
    return text if len(data) <= limit else _truncated(data[:limit], len(data) - limit)


class _CappedBuffer:
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


def _signal_group(pid: int, sig: signal.Signals) -> None:
    """Send ``sig`` to the process group led by ``pid``; a group already gone is fine."""
    try:
        # The leader may already be reaped. Its pid cannot be reused while the group has
        # members; once the group is empty, hitting a new group of the same id in the instant
        # before this call would need the kernel's pid counter to wrap around in between.
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _popen_kwargs(
    cwd: str | os.PathLike[str] | None, env: Mapping[str, str] | None
) -> dict[str, object]:
    return {
        "cwd": cwd,
        "env": dict(env) if env is not None else safe_env(),
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.PIPE,
        "start_new_session": True,
    }


def _result(
    returncode: int, out: _CappedBuffer, err: _CappedBuffer, timed_out: bool
) -> ProcessResult:
    code = TIMEOUT_EXIT_CODE if timed_out else returncode
    return ProcessResult(exit_code=code, stdout=out.text(), stderr=err.text(), timed_out=timed_out)


def run(
    argv: list[str],
    *,
    cwd: str | os.PathLike[str] | None,
    timeout: float,
    env: Mapping[str, str] | None,
    max_output: int = MAX_OUTPUT_BYTES,
) -> ProcessResult:
    """Run ``argv`` to completion or to ``timeout`` seconds under the module's policy.

    ``env=None`` means :func:`safe_env()`, never the parent's full environment. Raises
    ``FileNotFoundError`` if the program does not exist.
    """
    deadline = time.monotonic() + timeout
    out, err = _CappedBuffer(max_output), _CappedBuffer(max_output)
    proc: subprocess.Popen[bytes] = subprocess.Popen(argv, **_popen_kwargs(cwd, env))  # type: ignore[call-overload]
    assert proc.stdout is not None
    assert proc.stderr is not None
    streams: dict[IO[bytes], _CappedBuffer] = {proc.stdout: out, proc.stderr: err}
    timed_out = False
    try:
        with selectors.DefaultSelector() as selector:
            for stream in streams:
                selector.register(stream, selectors.EVENT_READ)
            timed_out = _pump_until_exit(proc, selector, streams, deadline)
            if timed_out:
                _signal_group(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    pass
            _signal_group(proc.pid, signal.SIGKILL)  # the leftovers, or the stubborn
            _drain(selector, streams, time.monotonic() + _DRAIN_SECONDS)
    finally:
        # Also reached on KeyboardInterrupt: the group must not outlive the call.
        _signal_group(proc.pid, signal.SIGKILL)
        for stream in streams:
            stream.close()
        proc.wait()
    return _result(proc.returncode, out, err, timed_out)


def _read_ready(
    selector: selectors.BaseSelector, streams: dict[IO[bytes], _CappedBuffer], wait: float
) -> None:
    for key, _ in selector.select(wait):
        stream: IO[bytes] = key.fileobj  # type: ignore[assignment]
        chunk = os.read(stream.fileno(), _CHUNK)
        if chunk:
            streams[stream].feed(chunk)
        else:
            selector.unregister(stream)


def _pump_until_exit(
    proc: subprocess.Popen[bytes],
    selector: selectors.BaseSelector,
    streams: dict[IO[bytes], _CappedBuffer],
    deadline: float,
) -> bool:
    """Read output until the program exits (False) or the deadline passes (True)."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return True
        if not selector.get_map():  # both pipes closed: only the exit is left to wait for
            try:
                proc.wait(remaining)
                return False
            except subprocess.TimeoutExpired:
                return True
        if proc.poll() is not None:  # exited, but something in its group holds the pipes
            return False
        _read_ready(selector, streams, min(remaining, _TICK_SECONDS))


def _drain(
    selector: selectors.BaseSelector, streams: dict[IO[bytes], _CappedBuffer], until: float
) -> None:
    """Collect what is left in the pipes; bounded, since an escaped process may hold them."""
    while selector.get_map() and (remaining := until - time.monotonic()) > 0:
        _read_ready(selector, streams, remaining)
