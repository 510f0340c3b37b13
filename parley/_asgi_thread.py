"""An ASGI application served by uvicorn in a background thread, on an event loop of its own:
the web page for the human (``parley.web``) and the AG-UI endpoint (``parley.ag_ui``).

The socket is bound here, before uvicorn starts, so that port 0 (a free port) is known at once
and a port in use is an ``OSError`` in the caller's thread. uvicorn is told to leave logging
alone (``log_config=None``: the application's logging configuration is not replaced) and, when
the application takes websockets, to use the websockets library's sans-I/O protocol (its legacy
one is deprecated). uvicorn is imported by the callers' extras (``web``, ``ag-ui``), so this
module is imported only by them.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import TYPE_CHECKING

import uvicorn

if TYPE_CHECKING:
    from starlette.types import ASGIApp

__all__ = ["ServerThread"]

_START_TIMEOUT = 30.0  # seconds; uvicorn starts in milliseconds, this only bounds a failure
_STOP_TIMEOUT = 10.0


class _Uvicorn(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, started: threading.Event) -> None:
        super().__init__(config)
        self._started_event = started
        self.loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        await super().startup(sockets=sockets)
        self._started_event.set()


class ServerThread:
    """``app`` served on ``host``:``port`` (0: a free port) until :meth:`stop`.

    ``name`` names the thread and the server in errors; ``ws_max_size`` (bytes a client may
    send in one websocket message) turns websockets on, None leaves them off;
    ``graceful_shutdown`` bounds the seconds :meth:`stop` lets open requests finish.
    """

    def __init__(
        self,
        app: ASGIApp,
        host: str,
        port: int,
        *,
        name: str,
        what: str,
        ws_max_size: int | None = None,
        graceful_shutdown: int = 3,
    ) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.create_server((host.strip("[]"), port), family=family)
        self.port: int = self._socket.getsockname()[1]
        self._what = what
        config = uvicorn.Config(
            app,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            loop="asyncio",
            http="h11",
            ws="none" if ws_max_size is None else "websockets-sansio",
            ws_max_size=ws_max_size or 1 << 20,
            server_header=False,
            proxy_headers=False,
            timeout_graceful_shutdown=graceful_shutdown,
        )
        self._started = threading.Event()
        self._server = _Uvicorn(config, self._started)
        self._error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()
        if not self._started.wait(_START_TIMEOUT) or self._error is not None:
            self.stop()
            raise RuntimeError(f"{what}'s server did not start: {self._error!r}")

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The server's event loop (None before it starts)."""
        return self._server.loop

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
                f"{self._what}'s server did not stop within {_STOP_TIMEOUT} s (thread "
                f"{self.thread.name})"
            )
