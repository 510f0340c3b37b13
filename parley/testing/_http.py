"""A small HTTP/1.1 server on asyncio streams: keep-alive, Content-Length and chunked bodies.

Just enough HTTP for an OpenAI-compatible fake: it answers one request at a time per
connection, many connections at once. A complete response goes out in a single write so no
request waits on Nagle's algorithm; a paced stream uses chunked transfer encoding.

A client that closes its connection while its request is being handled (a cancelled call)
has abandoned it: the handler is cancelled, with ``request.abandoned`` set, and the connection
closed, as a proxy would report "client closed request".
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import urlsplit

__all__ = ["DropConnection", "HttpRequest", "HttpResponse", "HttpServer"]

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024


class DropConnection(Exception):
    """Raised by a response stream to cut the connection where it stands."""


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class HttpRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    abandoned: bool = False  # the client closed the connection before the answer


class _Reader(asyncio.StreamReader):
    """A StreamReader that calls ``on_close`` when the peer closes or resets the connection."""

    on_close: Callable[[], None] | None = None

    def feed_eof(self) -> None:
        super().feed_eof()
        self._closed()

    def set_exception(self, exc: Exception) -> None:
        super().set_exception(exc)
        self._closed()

    def _closed(self) -> None:
        callback, self.on_close = self.on_close, None
        if callback is not None:
            callback()


@dataclass
class HttpResponse:
    """A response. ``stream`` (chunked) replaces ``body``; ``drop`` closes without answering."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    stream: AsyncIterator[bytes] | None = None
    drop: bool = False


Handler = Callable[[HttpRequest], Awaitable[HttpResponse]]


def _head(status: int, headers: Mapping[str, str], keep_alive: bool, length: int | None) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines.append(f"Connection: {'keep-alive' if keep_alive else 'close'}")
    lines.append(
        f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    )
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class HttpServer:
    """Serves ``handler`` on ``host:port`` (port 0: a free one) inside the running loop."""

    def __init__(self, handler: Handler, host: str, port: int) -> None:
        self._handler = handler
        self._host = host
        self._port = port
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def open_connections(self) -> int:
        """Client connections open now."""
        return len(self._connections)

    async def start(self) -> None:
        # asyncio.start_server's own wiring, with a reader that reports a closing client.
        def protocol() -> asyncio.StreamReaderProtocol:
            return asyncio.StreamReaderProtocol(
                _Reader(limit=MAX_HEADER_BYTES), self._serve_connection
            )

        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(protocol, self._host, self._port, backlog=1024)

    async def close(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while await self._serve_one(reader, writer):
                pass
        except DropConnection:
            writer.transport.abort()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; True if the connection stays open for another."""
        try:
            request, keep_alive = await self._read_request(reader, writer)
        except _BadRequest as e:
            body = str(e).encode()
            writer.write(_head(e.status, {"Content-Type": "text/plain"}, False, len(body)) + body)
            await writer.drain()
            return False
        if request is None:
            return False
        response = await self._handle(request, reader)
        if response.drop:
            # An abort, not a FIN: the client sees the connection reset, as on a crashed server.
            writer.transport.abort()
            return False
        if response.stream is None:
            writer.write(
                _head(response.status, response.headers, keep_alive, len(response.body))
                + response.body
            )
            await writer.drain()
            return keep_alive
        writer.write(_head(response.status, response.headers, keep_alive, None))
        async for piece in response.stream:
            if piece:
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return keep_alive

    async def _handle(self, request: HttpRequest, reader: asyncio.StreamReader) -> HttpResponse:
        """The handler's response; cancelled (with the connection) if the client goes."""
        if not isinstance(reader, _Reader):
            return await self._handler(request)
        task = asyncio.current_task()
        assert task is not None

        def gone() -> None:
            request.abandoned = True
            task.cancel()

        reader.on_close = gone
        try:
            return await self._handler(request)
        finally:
            reader.on_close = None

    async def _read_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> tuple[HttpRequest | None, bool]:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as e:
            if e.partial.strip():
                raise _BadRequest(400, "incomplete request head") from e
            return None, False  # the client closed an idle keep-alive connection
        except asyncio.LimitOverrunError as e:
            raise _BadRequest(431, "request head too large") from e
        lines = head.decode("latin-1").split("\r\n")
        try:
            method, target, version = lines[0].split(" ", 2)
        except ValueError as e:
            raise _BadRequest(400, f"malformed request line {lines[0]!r}") from e
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, sep, value = line.partition(":")
                if not sep:
                    raise _BadRequest(400, f"malformed header line {line!r}")
                headers[name.strip().lower()] = value.strip()
        connection = headers.get("connection", "").lower()
        keep_alive = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
        if headers.get("expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = await self._read_body(reader, headers)
        url = urlsplit(target)
        return HttpRequest(method.upper(), url.path, url.query, headers, body), keep_alive

    @staticmethod
    async def _read_body(reader: asyncio.StreamReader, headers: Mapping[str, str]) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            parts: list[bytes] = []
            total = 0
            while True:
                size_line = await reader.readuntil(b"\r\n")
                try:
                    size = int(size_line.split(b";")[0].strip(), 16)
                except ValueError as e:
                    raise _BadRequest(400, "malformed chunk size") from e
                if size == 0:
                    await _skip_trailers(reader)
                    return b"".join(parts)
                total += size
                if total > MAX_BODY_BYTES:
                    raise _BadRequest(413, "request body too large")
                parts.append(await reader.readexactly(size))
                await reader.readexactly(2)
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError as e:
            raise _BadRequest(400, "malformed Content-Length") from e
        if length < 0 or length > MAX_BODY_BYTES:
            raise _BadRequest(413, "request body too large")
        return await reader.readexactly(length) if length else b""


async def _skip_trailers(reader: asyncio.StreamReader) -> None:
    while (await reader.readuntil(b"\r\n")) != b"\r\n":
        pass
