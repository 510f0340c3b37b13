"""The fake server's HTTP layer, on aiohttp's low-level web server.

aiohttp rather than uvicorn + Starlette: its server cancels a handler whose client closed the
connection (``handler_cancellation``), which is exactly how an abandoned request must be
noticed, where an ASGI app has to poll ``receive()`` for ``http.disconnect``; and a handler
can reset its connection (``transport.abort()``), which ASGI has no word for. It starts in
well under a millisecond once imported.

The server knows nothing of models: a handler turns an :class:`HttpRequest` into an
:class:`HttpResponse` (a body, a stream of pieces, or a dropped connection).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

__all__ = ["DropConnection", "HttpRequest", "HttpResponse", "HttpServer"]

MAX_BODY_BYTES = 64 * 1024 * 1024
# A dropped connection is torn down by the loop's next turn; this bounds the wait for it.
_DROP_WAIT = 5.0
_SHUTDOWN_TIMEOUT = 0.5
# aiohttp logs each unparsable request at ERROR; a fake server answers it with a 400 and that
# is all a test needs, so nothing is printed unless the application configured logging.
_LOG = logging.getLogger("parley.testing.http")
_LOG.addHandler(logging.NullHandler())


class DropConnection(Exception):
    """Raised by a response stream to cut the connection where it stands."""


@dataclass
class HttpRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    # Whether the client has closed the connection (asked when the handler is cancelled).
    gone: Callable[[], bool] = field(default=lambda: False, repr=False)

    @property
    def abandoned(self) -> bool:
        """The client closed the connection before the answer."""
        return self.gone()


@dataclass
class HttpResponse:
    """A response. ``stream`` (chunked) replaces ``body``; ``drop`` resets the connection
    without answering."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    stream: AsyncIterator[bytes] | None = None
    drop: bool = False


Handler = Callable[[HttpRequest], Awaitable[HttpResponse]]


class HttpServer:
    """Serves ``handler`` on ``host:port`` (port 0: a free one) inside the running loop."""

    def __init__(self, handler: Handler, host: str, port: int) -> None:
        self._handler = handler
        self._host = host
        self._port = port
        self._closing = False
        self._web: web.Server | None = None
        self._listener: asyncio.Server | None = None

    @property
    def port(self) -> int:
        assert self._listener is not None, "server not started"
        return int(self._listener.sockets[0].getsockname()[1])

    @property
    def open_connections(self) -> int:
        """Client connections open now, idle keep-alive ones included."""
        return 0 if self._web is None else len(self._web.connections)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()

        def make_request(message: Any, payload: Any, protocol: Any, writer: Any, task: Any) -> Any:
            # aiohttp refuses bodies over 1 MiB by default; a prompt with images is bigger.
            return web.BaseRequest(
                message, payload, protocol, writer, task, loop, client_max_size=MAX_BODY_BYTES
            )

        self._web = web.Server(
            self._serve,
            request_factory=make_request,
            handler_cancellation=True,
            access_log=None,
            logger=_LOG,
        )
        self._listener = await loop.create_server(self._web, self._host, self._port, backlog=1024)

    async def close(self) -> None:
        if self._listener is None or self._web is None:
            return
        self._closing = True
        self._listener.close()
        await self._web.shutdown(_SHUTDOWN_TIMEOUT)
        await self._listener.wait_closed()

    async def _serve(self, raw: web.BaseRequest) -> web.StreamResponse:
        request = HttpRequest(
            raw.method,
            raw.path,
            raw.query_string,
            {k.lower(): v for k, v in raw.headers.items()},
            await raw.read(),
            lambda: not self._closing and raw.transport is None,
        )
        response = await self._handler(request)
        if response.drop:
            await _drop(raw)
        headers = dict(response.headers)
        if raw.keep_alive:
            # aiohttp leaves HTTP/1.1's default unsaid; clients and tests look for it.
            headers.setdefault("Connection", "keep-alive")
        if response.stream is None:
            return web.Response(status=response.status, headers=headers, body=response.body)
        out = web.StreamResponse(status=response.status, headers=headers)
        out.enable_chunked_encoding()
        await out.prepare(raw)
        try:
            async for piece in response.stream:
                if piece:
                    await out.write(piece)
        except DropConnection:
            await _drop(raw)
        await out.write_eof()
        return out


async def _drop(raw: web.BaseRequest) -> None:
    """Reset the connection (an abort, not a FIN: the client sees what a crashed server does)
    and wait for aiohttp to cancel this handler as the connection goes."""
    transport = raw.transport
    if transport is not None:
        transport.abort()
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.sleep(_DROP_WAIT)
    raise ConnectionResetError("the fake server dropped the connection")
