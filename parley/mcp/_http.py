"""The streamable-HTTP transport: the SDK's app behind its bearer-token check, run by uvicorn
on a socket bound here first, so that the URL reported names the real port (``--port 0``)."""

from __future__ import annotations

import hmac
import socket
import time
from collections.abc import Callable
from typing import Any

__all__ = ["BearerToken", "listen", "serve_http"]

_TOKEN_LIFETIME = 10 * 365 * 24 * 3600  # the token is valid while the server runs


class BearerToken:
    """The SDK's ``TokenVerifier``: one shared secret, compared in constant time."""

    def __init__(self, secret: str) -> None:
        if not secret:
            raise ValueError("the MCP bearer token must not be empty")
        self._secret = secret.encode()

    async def verify_token(self, token: str) -> Any:
        from mcp.server.auth.provider import AccessToken

        if not hmac.compare_digest(token.encode(), self._secret):
            return None
        return AccessToken(
            token="", client_id="parley", scopes=[], expires_at=int(time.time()) + _TOKEN_LIFETIME
        )


def http_app(server: Any, host: str, port: int, secret: str) -> Any:
    """The Starlette app serving ``server`` at ``/mcp``, refusing requests without ``secret``."""
    from mcp.server.auth.settings import AuthSettings
    from pydantic import AnyHttpUrl

    # The SDK asks for an issuer; no OAuth server exists here (no metadata route is made
    # without a resource_server_url), the shared token is the whole scheme.
    auth = AuthSettings(issuer_url=AnyHttpUrl(f"http://127.0.0.1:{port}"), resource_server_url=None)
    return server.streamable_http_app(
        host=host, auth=auth, token_verifier=BearerToken(secret), json_response=False
    )


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (port 0: one the system picks); connections made
    from now on wait in its backlog until the server accepts them. Raises OSError naming the
    address when it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as e:
        raise OSError(e.errno, f"cannot serve MCP on {host}:{port}: {e.strerror or e}") from e


async def serve_http(
    server: Any, host: str, port: int, secret: str, status: Callable[[str], None]
) -> None:
    """Serve until cancelled; ``status`` is told the URL (with the port actually bound, which
    ``port=0`` leaves to the system) once clients can connect."""
    import uvicorn

    sock = listen(host, port)
    try:
        port = int(sock.getsockname()[1])
        app = http_app(server, host, port, secret)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        runner = uvicorn.Server(config)
        shown = f"[{host}]" if ":" in host else host
        status(f"MCP server (streamable HTTP) on http://{shown}:{port}/mcp")
        await runner.serve(sockets=[sock])
    finally:
        sock.close()
