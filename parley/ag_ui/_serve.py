"""``AGUIStream.serve()``: the endpoint under uvicorn in a thread of its own (``parley-ag-ui``),
for notebooks, scripts and tests; an application mounts ``build_asgi()`` in its own server."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.routing import Route

from .._asgi_thread import ServerThread
from .._core.lifetime import ClosesOnExit
from .._net import http_url, is_loopback

if TYPE_CHECKING:
    from .adapter import AGUIStream

__all__ = ["AGUIServer"]

logger = logging.getLogger(__name__)

_CLOSE_TIMEOUT = 30.0  # seconds the given-up chats have to end when the server closes


class AGUIServer(ClosesOnExit):
    """An :class:`~parley.ag_ui.AGUIStream` served over HTTP until :meth:`close` (or the end
    of its ``with`` block); :attr:`url` is where a client posts its runs."""

    def __init__(self, stream: AGUIStream, host: str, port: int, path: str) -> None:
        if not is_loopback(host):
            logger.warning(
                "parley.ag_ui serves on %s, reachable from other machines: anyone who reaches "
                "it runs chats on your models and answers their approvals; put it behind your "
                "application's authentication",
                host,
            )
        if not path.startswith("/"):
            raise ValueError(f"the endpoint's path must start with '/', got {path!r}")
        self.stream = stream
        app = Starlette(routes=[Route(path, stream.build_asgi(), methods=["POST"])])
        self._server = ServerThread(app, host, port, name="parley-ag-ui", what="the AG-UI endpoint")
        self.host = host
        self.port = self._server.port
        self.path = path
        self._closed = False

    @property
    def url(self) -> str:
        """The endpoint's address."""
        return http_url(self.host, self.port, self.path)

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Give up the chats still waiting (their questions answered ``exit``) and stop."""
        if self._closed:
            return
        self._closed = True
        try:
            loop = self._server.loop
            if loop is not None and self._server.thread.is_alive():
                done = asyncio.run_coroutine_threadsafe(self.stream.aclose(), loop)
                done.result(_CLOSE_TIMEOUT)
        finally:
            self._server.stop()
