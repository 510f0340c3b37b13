"""The page's server: its application under uvicorn in the ``parley-web`` thread
(:mod:`parley._asgi_thread`), websockets on. An open page is told to go at once (the hub closes
its websocket before the server stops), so the graceful shutdown only waits for that close."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._asgi_thread import ServerThread
from .._net import is_loopback

if TYPE_CHECKING:
    from starlette.types import ASGIApp

__all__ = ["is_loopback", "page_server"]

_MAX_MESSAGE = 1 << 20  # bytes a page may send in one websocket message


def page_server(app: ASGIApp, host: str, port: int) -> ServerThread:
    """The page's ``app`` served on ``host``:``port`` (0: a free port) until ``stop()``."""
    return ServerThread(
        app, host, port, name="parley-web", what="the web page", ws_max_size=_MAX_MESSAGE
    )
