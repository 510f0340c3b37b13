"""A plain HTTP server on loopback for tests that fetch something (an image, a page, the docs
site): the standard library's threading server, quiet, stopped at the end of the block."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["QuietHandler", "serving"]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files (``directory=``) without a log line per request."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving(handler: Callable[..., http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """``http://127.0.0.1:<port>`` of a server answering with ``handler``, for the block."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="test-http", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
