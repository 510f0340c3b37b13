"""uvicorn serving the page's application in a background thread, on an event loop of its own.

The socket is bound here, before uvicorn starts, so that port 0 (a free port) is known at once
and a port in use is an ``OSError`` in the caller's thread. uvicorn is told to leave logging
alone (``log_config=None``: the application's logging configuration is not replaced) and to
use the websockets library's sans-I/O protocol (its legacy one is deprecated).
"""

from __future__ import annotations

import asyncio
import socket
import threading

import uvicorn
from starlette.types import ASGIApp

from .._net import is_loopback

__all__ = ["ServerThread", "is_loopback"]

_START_TIMEOUT = 30.0  # seconds; uvicorn starts in milliseconds, this only bounds a failure
# An open page is told to go at once (the hub closes its websocket before the server stops),
# so the graceful shutdown only waits for that close to complete.
_GRACEFUL_SHUTDOWN = 3
_STOP_TIMEOUT = 10.0
_MAX_MESSAGE = 1 << 20  # bytes a page may send in one websocket message


class _Uvicorn(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, started: threading.Event) -> None:
        super().__init__(config)
        self._started_event = started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self._started_event.set()


class ServerThread:
    """``app`` served on ``host``:``port`` (0: a free port) until :meth:`stop`."""

    def __init__(self, app: ASGIApp, host: str, port: int) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.create_server((host.strip("[]"), port), family=family)
        self.port: int = self._socket.getsockname()[1]
        config = uvicorn.Config(
            app,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            loop="asyncio",
            http="h11",
            ws="websockets-sansio",
            ws_max_size=_MAX_MESSAGE,
            server_header=False,
            proxy_headers=False,
            timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN,
        )
        self._started = threading.Event()
        self._server = _Uvicorn(config, self._started)
        self._error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="parley-web", daemon=True)
        self.thread.start()
        if not self._started.wait(_START_TIMEOUT) or self._error is not None:
            self.stop()
            raise RuntimeError(f"the web page's server did not start: {self._error!r}")

    def _run(self) -> None:
        try:
            asyncio.run(self._server.serve(sockets=[self._socket]))
        except BaseException as error:  # reported to the thread that started it
            self._error = error
        finally:
            self._started.set()

    def stop(self) -> None:
        """Stop serving and wait for the thread to end."""
        self._server.should_exit = True
        self.thread.join(_STOP_TIMEOUT)
        self._socket.close()
        if self.thread.is_alive():
            raise RuntimeError(
                f"the web page's server did not stop within {_STOP_TIMEOUT} s (thread "
                f"{self.thread.name})"
            )
