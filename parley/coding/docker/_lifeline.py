"""The lifeline: a connection to a sandbox container's stdin whose end ends the container.

A container is created with its stdin open and ``StdinOnce``, and this process attaches to that
stdin before starting it and holds the connection for the container's life. Its PID 1 (the
keeper, ``_keeper``) watches the stdin; when the connection closes — on
:meth:`Lifeline.close`, or by the kernel because this process died, SIGKILL included — the
engine closes the stdin, the keeper reads end of file and exits, and the kernel kills every
process in the container (``_sandbox`` has the rest of the container's design).

A forked child does not keep its parent's containers alive: after a fork its copy of each
lifeline's descriptor is replaced by ``/dev/null``.
"""

from __future__ import annotations

import os
import socket
import weakref
from typing import Any

from ..._core.runtime import after_fork

__all__ = ["Lifeline"]


class Lifeline:
    """The connection attached to a container's stdin; the container lives while it is open."""

    def __init__(self, attached: Any) -> None:
        self._attached = attached  # what docker-py returns: a SocketIO, or a socket over TLS
        raw = getattr(attached, "_sock", attached)
        self._socket = raw if isinstance(raw, socket.socket) else None
        self._fd = self._socket.fileno() if self._socket is not None else -1
        self._closed = False
        _lifelines.add(self)

    def close(self) -> None:
        """Hang up: the container's stdin reaches end of file and the container ends."""
        if self._closed:
            return
        self._closed = True  # first: a fork from now on leaves the descriptor alone
        if self._socket is not None:
            try:
                # Ends the connection even where a copy of the descriptor is still open.
                self._socket.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        response = getattr(self._attached, "_response", None)
        # The response owns the socket: closing it closes the socket, then the wrapper.
        closers = [response.close] if response is not None else []
        for close in [*closers, self._attached.close]:
            try:
                close()
            except (OSError, ValueError):
                pass

    def leave_to_parent(self) -> None:
        """In a forked child: let go of the connection (without closing the parent's), so that
        the parent's death still ends the container."""
        if self._closed or self._fd < 0:
            return
        # /dev/null in its place keeps the descriptor number valid for the socket object.
        null = os.open(os.devnull, os.O_RDWR)
        try:
            os.dup2(null, self._fd, inheritable=False)
        finally:
            os.close(null)


_lifelines: weakref.WeakSet[Lifeline] = weakref.WeakSet()


def _leave_lifelines_to_parent() -> None:
    for lifeline in list(_lifelines):
        lifeline.leave_to_parent()


after_fork(_leave_lifelines_to_parent)
