"""Fixtures of the AG-UI tests: an endpoint served on loopback (closed after the test, its server
thread checked gone) and clients of it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest

pytest.importorskip("ag_ui.core")
pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from parley.ag_ui import AGUIServer, AGUIStream

from ._client import Client


def server_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "parley-ag-ui"]


@pytest.fixture
def serve() -> Iterator[Callable[[AGUIStream], AGUIServer]]:
    """``serve(stream)``: the stream on 127.0.0.1 and a free port, closed after the test."""
    with ExitStack() as stack:

        def start(stream: AGUIStream) -> AGUIServer:
            return stack.enter_context(stream.serve())

        yield start
    assert server_threads() == []


@pytest.fixture
def client() -> Iterator[Callable[..., Client]]:
    """``client(url, thread=None)``: an AG-UI client, closed after the test."""
    with ExitStack() as stack:

        def make(url: str, thread: str | None = None) -> Client:
            made = Client(url, thread)
            stack.callback(made.close)
            return made

        yield make
