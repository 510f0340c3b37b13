"""``IOWebsockets``: a stream over one websocket connection, for chats driven from a web page.

::

    def on_connect(iostream: IOWebsockets) -> None:
        task = iostream.input()                      # the first message from the browser
        user.initiate_chat(assistant, message=task)  # prints and prompts go to the browser

    with IOWebsockets.run_server_in_thread(on_connect=on_connect, port=0) as uri:
        ...                                          # clients connect to uri

Needs the optional ``websockets`` package (>= 13), imported only when this class is used, so
``import parley.io`` stays cheap.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from .base import IOStream

if TYPE_CHECKING:
    import ssl

__all__ = ["IOWebsockets", "ServerConnection"]

logger = logging.getLogger(__name__)

# How long to wait for the accept loop's thread once the server is shut down; it only has to
# notice its closed socket, so this is generous.
_JOIN_TIMEOUT = 10.0


class ServerConnection(Protocol):
    """The part of a websocket connection IOWebsockets uses (``websockets.sync`` has it)."""

    def send(self, message: str | bytes) -> None: ...

    def recv(self, timeout: float | None = None) -> str | bytes: ...

    def close(self) -> None: ...


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            "IOWebsockets needs the optional 'websockets' package (version 13 or later); "
            "install it with: pip install websockets",
            name="websockets",
        ) from e


class IOWebsockets(IOStream):
    """An :class:`IOStream` over one websocket connection.

    ``print`` sends ``sep.join(map(str, objects)) + end`` as one text message. ``input`` sends
    the prompt (if not empty) as a message, then waits for the client's next message (bytes
    are decoded as UTF-8). If the client goes away while ``input`` waits, it raises
    ``EOFError``, as the builtin ``input`` does at the end of stdin.
    """

    def __init__(self, websocket: ServerConnection) -> None:
        _import("websockets.sync.server")
        self._websocket = websocket

    @property
    def websocket(self) -> ServerConnection:
        """The connection this stream talks over."""
        return self._websocket

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        self._websocket.send(sep.join(map(str, objects)) + end)

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        if prompt != "":
            self._websocket.send(prompt)
        closed = _import("websockets.exceptions").ConnectionClosed
        try:
            message = self._websocket.recv()
        except closed as e:
            raise EOFError(
                f"the websocket client disconnected while waiting for input (prompt {prompt!r})"
            ) from e
        return message.decode("utf-8") if isinstance(message, bytes) else message

    @staticmethod
    @contextmanager
    def run_server_in_thread(
        *,
        host: str = "127.0.0.1",
        port: int = 8765,
        on_connect: Callable[[IOWebsockets], None],
        ssl_context: ssl.SSLContext | None = None,
        **kwargs: Any,
    ) -> Iterator[str]:
        """Serve websockets in a background thread for the duration of the ``with`` block.

        Each client connection runs ``on_connect(iostream)`` in its own thread, with that
        connection's :class:`IOWebsockets` installed as the default stream. Yields the URI to
        connect to: ``ws://host:port`` (``wss://`` with ``ssl_context``), with the port the
        server really bound, so ``port=0`` picks a free one. Extra keyword arguments go to
        ``websockets.sync.server.serve``. On exit, open connections are closed (code 1001) and
        the server waits for the ``on_connect`` calls to return.

        Differences from AutoGen: a port that cannot be bound raises here (AutoGen waits
        forever), and an ``on_connect`` that raises closes its connection with code 1011
        (internal error) rather than a normal close; either way the error is logged.
        """
        if not callable(on_connect):
            raise TypeError(
                "IOWebsockets.run_server_in_thread needs on_connect=fn(iostream), "
                f"got {type(on_connect).__name__}"
            )
        serve = _import("websockets.sync.server").serve

        def handler(connection: Any) -> None:
            _handle(connection, on_connect)

        # serve() binds before returning, so a busy port fails here, in the caller's thread.
        server = serve(handler, host, port, ssl=ssl_context, **kwargs)
        bound_port = server.socket.getsockname()[1]
        thread = threading.Thread(
            target=server.serve_forever, name=f"parley-iowebsockets-{bound_port}", daemon=True
        )
        thread.start()
        try:
            yield f"{'wss' if ssl_context else 'ws'}://{_uri_host(host)}:{bound_port}"
        finally:
            server.shutdown()
            thread.join(_JOIN_TIMEOUT)


def _handle(connection: Any, on_connect: Callable[[IOWebsockets], None]) -> None:
    iostream = IOWebsockets(connection)
    with IOStream.set_default(iostream):
        try:
            on_connect(iostream)
        except Exception as e:
            # Nobody above this thread could handle it: log it and tell the client.
            logger.warning("IOWebsockets on_connect failed; closing the connection", exc_info=True)
            connection.close(code=1011, reason=f"on_connect failed: {type(e).__name__}"[:120])


def _uri_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
