"""One owner at a time for a durable chat: the lease a run holds on its chat in the store.

A run (``initiate_chat`` with a store, or ``resume``) claims its chat's lease before it reads or
writes the journal; a second run of the same chat is refused (:class:`ChatLeaseError`) while
the lease is held. The lease names its owner (host, PID namespace, process and its start time,
and a token of the run) and expires ``lease_seconds`` after it was last renewed: the thread
``parley-durable-lease`` renews every live lease a few times per period, and the run releases
it when it ends, pauses or fails. So a dead owner's lease lapses on its own; on the owner's own
host (same PID namespace) a claim sees at once that its process is gone and takes the lease
over. Each step the run writes checks, in the same transaction, that the lease is still its
own (an expired lease nobody claimed still is; a released one is nobody's): a run that stalled
past its lease (a stopped process, a slow Ray worker whose chunk was handed on) is stopped at
its next write instead of racing the run that took over.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from .._core.runtime import after_fork

__all__ = ["LEASE_SECONDS", "RELEASED", "Lease", "hold", "new_owner", "owner_is_dead", "release"]

LEASE_SECONDS = 30.0
RELEASED = "(none: a later run took the chat and has let it go)"
"""The holder a store names when a run's lease is gone altogether."""


def _process_start(pid: int) -> str | None:
    """The start time of process ``pid`` (``/proc``, clock ticks since boot), None if gone or
    unknown; with its state, so a zombie counts as gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode(errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return fields[19]


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid").strip("pid:[]")
    except OSError:
        return "?"


def new_owner() -> str:
    """A fresh owner id for one run: ``host:pidns:pid:start:token``."""
    pid = os.getpid()
    start = _process_start(pid) or "?"
    return f"{socket.gethostname()}:{_pid_namespace()}:{pid}:{start}:{secrets.token_hex(4)}"


def owner_is_dead(owner: str) -> bool:
    """Whether ``owner``'s process is known to be gone: it ran on this host, in this PID
    namespace, and no process has its PID and start time now. Anything else (another host,
    an id that does not parse) is not known to be dead: its lease must expire."""
    parts = owner.rsplit(":", 4)
    if len(parts) != 5 or parts[0] != socket.gethostname() or parts[1] != _pid_namespace():
        return False
    if parts[3] == "?" or not parts[2].isdigit():
        return False
    return _process_start(int(parts[2])) != parts[3]


@dataclass(eq=False)
class Lease:
    """A lease a run holds: renewed by the lease thread until released."""

    store: Any  # a BaseChatStore
    chat_id: str
    owner: str
    seconds: float
    renewed: float = field(default_factory=time.monotonic)
    lost: bool = False


_lock = threading.Condition()
_leases: set[Lease] = set()
_thread: threading.Thread | None = None


def hold(lease: Lease) -> None:
    """Keep ``lease`` renewed until :func:`release`."""
    global _thread
    with _lock:
        _leases.add(lease)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_renew_forever, name="parley-durable-lease")
            _thread.daemon = True
            _thread.start()
        _lock.notify_all()


def release(lease: Lease) -> None:
    """Stop renewing ``lease`` (the store's release is the caller's)."""
    with _lock:
        _leases.discard(lease)


def _renew_forever() -> None:
    while True:
        with _lock:
            while not _leases:
                _lock.wait()
            now = time.monotonic()
            due = [lease for lease in _leases if now - lease.renewed >= lease.seconds / 3]
            wait = min(lease.seconds / 3 - (now - lease.renewed) for lease in _leases)
        for lease in due:
            try:
                kept = lease.store.renew_lease(lease.chat_id, lease.owner, lease.seconds)
            except Exception:  # the store is unreachable now: try again soon, it may expire
                lease.renewed += lease.seconds / 10
                continue
            lease.renewed = time.monotonic()
            if not kept:
                lease.lost = True
                release(lease)
        if not due:
            with _lock:
                _lock.wait(max(0.01, wait))


def _forget() -> None:
    global _lock, _thread
    _lock = threading.Condition()
    _leases.clear()
    _thread = None


after_fork(_forget)
