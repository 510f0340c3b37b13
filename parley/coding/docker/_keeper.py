"""PID 1 of a sandbox container: the *keeper*.

It must never die while the container should live, since the kernel then kills every process in
the container; it reaps every orphan re-parented to it (killed processes must not pile up as
zombies against the process limit); on ``SIGUSR1`` it kills every other process in the container
(``kill(-1, SIGKILL)``: the host's timeout and cancellation, which need no new process in the
container, as a fork bomb may hold every PID); and, on a lifeline (``_lifeline``), it
exits when its stdin reaches end of file — the owner is gone — taking the container with it.

The keeper is a few lines of Python when the image has ``python3`` (parley's image and AutoGen's
``python:*`` images do): it never forks, so a full process table cannot take it down. Otherwise
it is ``sh``, which forks a ``sleep`` (or, on a lifeline, a ``cat`` reading its stdin) to wait on
and forks it again after each block's ``kill -KILL -1``; a fork that fails then (the process
limit still full of a fork bomb's zombies) makes ``sh`` exit, and the container with it — the
next block starts a new one.
"""

from __future__ import annotations

__all__ = ["keeper_entrypoint"]

_PYTHON = """\
import os, select, signal
def kill_all(*_):
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass
signal.signal(signal.SIGUSR1, kill_all)
signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
signal.signal(signal.SIGINT, lambda *_: os._exit(0))
wake, woken = os.pipe()
os.set_blocking(woken, False)
signal.set_wakeup_fd(woken)
signal.signal(signal.SIGCHLD, lambda *_: None)
watched = [wake, 0] if WATCH else [wake]
while True:
    ready = select.select(watched, [], [])[0]
    if 0 in ready:
        try:
            if not os.read(0, 65536):
                os._exit(0)
        except OSError:
            os._exit(0)
    if wake in ready:
        os.read(wake, 512)
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
"""

# `wait` returns early when a trapped signal arrives, then the trap runs; dash and bash wait
# with waitpid(-1), which also reaps the orphans re-parented to PID 1.
_SH = (
    "trap 'kill -KILL -1 2>/dev/null' USR1; trap 'exit 0' TERM INT; "
    "while :; do sleep 86400 & wait $!; done"
)
# On a lifeline: a background job of a non-interactive sh reads /dev/null unless told otherwise,
# hence fd 3. `cat` ends by a signal (status > 128: a `kill -KILL -1`, or the wait cut short by
# USR1) and is started again, or ends by itself at end of file: the lifeline is gone.
_SH_LIFELINE = (
    "exec 3<&0; trap 'kill -KILL -1 2>/dev/null' USR1; trap 'exit 0' TERM INT; "
    "while :; do cat <&3 >/dev/null & wait $!; [ $? -gt 128 ] || exit 0; done"
)
# `command -v` is a builtin: choosing costs no fork.
_CHOOSE = 'command -v python3 >/dev/null 2>&1 && exec python3 -I -S -c "$0"; exec /bin/sh -c "$1"'


def keeper_entrypoint(lifeline: bool) -> list[str]:
    """The container's entrypoint: the keeper, watching its stdin when on a ``lifeline``."""
    python = _PYTHON.replace("WATCH", "True" if lifeline else "False")
    return ["/bin/sh", "-c", _CHOOSE, python, _SH_LIFELINE if lifeline else _SH]
