"""Fixtures of the web page's tests: a served page (closed after the test, its server thread
checked gone), pages over the websocket, and chats running in the background."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from websockets.sync.client import connect

from parley.web import WebHuman, serve

from ._support import WAIT, Page, web_threads, ws_url


@pytest.fixture
def human() -> Iterator[WebHuman]:
    """A served page; afterwards closed, and its server thread gone."""
    with serve() as served:
        yield served
    assert served.closed
    assert web_threads() == []


@pytest.fixture
def open_page(human: WebHuman) -> Iterator[Callable[..., Page]]:
    """Open pages on ``human`` (or another URL); all closed after the test."""
    with ExitStack() as stack:

        def opener(url: str | None = None) -> Page:
            websocket = stack.enter_context(connect(ws_url(url or human.url), open_timeout=WAIT))
            return Page(websocket)

        yield opener


@pytest.fixture
def background() -> Iterator[Callable[..., concurrent.futures.Future[Any]]]:
    """Run a function (a sync chat) in a thread; the test waits for its future, bounded."""
    with concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="test-chat") as pool:
        yield pool.submit
