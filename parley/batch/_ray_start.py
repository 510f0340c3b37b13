"""Starting (or joining) Ray for a batch, so that a loaded machine does not fail it.

When ``ray.init`` starts a new instance, it waits for the raylet it launched to register with
the GCS: one query that waits up to Ray's ``raylet_start_wait_time_s`` setting (10 s unless
``RAY_raylet_start_wait_time_s`` says otherwise), inside a loop that gives up after a fixed
30 s (``ray/_private/node.py``). On a busy machine (two cores running other work) the raylet,
which waits for its agents (Python processes that import much of Ray), registers too late, and
``ray.init`` raises "The current node timed out during startup" although nothing is wrong but
the wait. So two things, both bounded by ``RayBackend.init_timeout``:

- before Ray is imported (it reads its settings once), the registration wait is raised
  (:func:`allow_slow_registration`; a value the user set stays);
- a start that still timed out is cleaned up (the processes it launched are killed: Ray keeps
  no handle on them once its node object failed) and tried again, until the budget is spent;
  then :class:`~parley.exceptions.RayStartError` says what happened and what to change.

Any other error of ``ray.init`` (a wrong address, a refused token) is not retried.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import time
import warnings
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

from ..exceptions import RayStartError

__all__ = ["REGISTRATION_WAIT", "allow_slow_registration", "start_ray", "startup_timed_out"]

_TIMED_OUT = "timed out during startup"  # Ray's words (ray/_private/node.py)
_GRACE = 3.0  # seconds a left-over process gets to stop on SIGTERM
REGISTRATION_WAIT = "RAY_raylet_start_wait_time_s"  # Ray's setting, read from the environment
_MAX_REGISTRATION_WAIT = 120  # seconds: longer, one stuck start would eat the whole budget


def allow_slow_registration(budget: float, environ: MutableMapping[str, str]) -> bool:
    """Before Ray is imported, for an instance about to be started: let a node take up to
    ``budget`` seconds (at most 120) to register, unless ``environ`` already sets Ray's wait.
    The instance's processes inherit it. Whether it was set."""
    if REGISTRATION_WAIT in environ:
        return False
    environ[REGISTRATION_WAIT] = str(int(max(10, min(budget, _MAX_REGISTRATION_WAIT))))
    return True


def startup_timed_out(error: BaseException) -> bool:
    """Whether ``ray.init`` failed only because its new node missed Ray's start-up wait."""
    return _TIMED_OUT in str(error)


def start_ray(
    ray: Any,
    address: str | None,
    init_kwargs: dict[str, Any],
    budget: float,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """``ray.init(address=address, **init_kwargs)``, tried again while a new node times out
    during start-up and ``budget`` seconds are not spent. The number of attempts it took."""
    deadline = clock() + budget
    attempts = 0
    while True:
        attempts += 1
        before = _descendants()
        try:
            ray.init(address=address, **init_kwargs)
            return attempts
        except Exception as error:
            if not startup_timed_out(error):
                raise
            _stop({pid for pid in _descendants() - before if _is_ray(pid)})
            with contextlib.suppress(Exception):
                ray.shutdown()
            if clock() >= deadline:
                raise RayStartError(attempts, budget) from error
            failed: list[BaseException] = [error]  # dropped in _forget_failed_start, not here
        _forget_failed_start(failed)


def _forget_failed_start(failed: list[BaseException]) -> None:
    """Drop the failed start's error, and with it Ray's node (reachable only from its frames).
    The node's ``Popen`` objects would each warn "subprocess ... is still running" when
    collected, which is not true: their processes were stopped and reaped above."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        failed.clear()
        gc.collect()


def _descendants() -> set[int]:
    """The processes this one started, and theirs (Linux: from /proc; elsewhere none)."""
    found: set[int] = set()
    todo = [os.getpid()]
    while todo:
        pid = todo.pop()
        for children in Path(f"/proc/{pid}/task").glob("*/children"):
            try:
                text = children.read_text()
            except OSError:  # the task ended meanwhile
                continue
            for child in map(int, text.split()):
                if child not in found:
                    found.add(child)
                    todo.append(child)
    return found


def _is_ray(pid: int) -> bool:
    """Whether a process runs one of Ray's programs (each lives in the ray package's folder):
    another thread of this process may have started something meanwhile, which stays."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return f"{os.sep}ray{os.sep}".encode() in command


def _stop(pids: set[int]) -> None:
    """SIGTERM, then SIGKILL to what is left: the GCS, raylet and agents of a failed start."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + _GRACE
        while (pids := {p for p in pids if _alive(p)}) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not pids:
            return


def _alive(pid: int) -> bool:
    stat = _stat(pid)
    if stat is None:
        return False
    if int(stat[1]) == os.getpid():
        # A child that exited stays a zombie until its parent reaps it: this process.
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0]:
                return False
    return stat[0] != "Z"


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state, parent, ...)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
