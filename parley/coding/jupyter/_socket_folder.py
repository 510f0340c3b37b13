"""A private folder for a kernel's Unix sockets (ZeroMQ ``ipc``), short enough for their paths.

Kernels talk over Unix sockets rather than TCP ports: ``jupyter_client`` picks a TCP kernel's
ports by binding and releasing them, and another process starting a kernel at the same moment
can take one before the kernel binds it ("Address already in use"); a socket in a folder only
this user can enter is also out of other local users' reach. A socket's path has at most 103
bytes (macOS; 107 on Linux), so a long ``TMPDIR`` is passed over for ``/tmp``.
"""

from __future__ import annotations

import os
import tempfile

__all__ = ["private_socket_folder"]

_SOCKET_PATH_MAX = 103


def private_socket_folder(prefix: str, room: int) -> str:
    """A new folder only this user can enter, in the temporary folder, or in ``/tmp`` when that
    would leave fewer than ``room`` bytes of a socket's path for the names in it."""
    folder = tempfile.mkdtemp(prefix=prefix)
    if len(os.fsencode(folder)) + room <= _SOCKET_PATH_MAX or not os.path.isdir("/tmp"):
        return folder
    os.rmdir(folder)
    return tempfile.mkdtemp(prefix=prefix, dir="/tmp")
