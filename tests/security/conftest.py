"""Fixtures of the security tests."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest


@pytest.fixture
def host_server() -> Iterator[int]:
    """A TCP server on this machine's loopback; its port. It accepts nothing: a client that
    reaches it connects (the kernel completes the handshake), one that does not is refused."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]
