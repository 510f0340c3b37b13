"""The Starlette application: the page, its script and style, and the websocket that carries
the live state to the page and the human's actions back.

Every HTTP request and websocket handshake must carry the access token (``?token=``,
compared in constant time); anything else gets a 403 before the application sees it. The
websocket also refuses a handshake whose ``Origin`` is another site's. The page is served
with a strict Content-Security-Policy (its own script and style only, no inline code) and
``Referrer-Policy: no-referrer``, so the token in its URL is not sent elsewhere.

Websocket protocol (JSON text both ways). The server sends a ``snapshot`` first (``session``,
``chats`` with their ``items``, ``draft`` and ``console``, ``requests``), then the changes:
``chat``, ``item``, ``token``, ``draft_end``, ``console``, ``request``, ``closed``, and the
``result`` of each action (``ref``, ``ok``, ``error``). The page sends actions::

    {"type": "answer", "request": "r3", "action": "send" | "approve" | "reject" | "stop",
     "text": "...", "ref": 1}
    {"type": "stop", "chat": "<chat id>", "ref": 2}
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import html
import json
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from ._hub import Hub
from ._records import AnswerRefusedError

__all__ = ["build_app"]

# A page that falls this far behind (events queued, not yet sent) is disconnected; it
# reconnects and starts again from a fresh snapshot instead of the server buffering forever.
MAX_QUEUED = 10_000
_CLOSE_GOING_AWAY = 1001
_CLOSE_POLICY = 1008
_CLOSE_TRY_AGAIN = 1013
_OVERFLOW = object()

_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
_ACTIONS = {"send", "approve", "reject", "stop"}


def _asset(name: str) -> str:
    return (resources.files("parley.web") / "static" / name).read_text("utf-8")


class _TokenGuard:
    """ASGI middleware: a 403 for any request without the right ``token`` in its query."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            given = (query.get("token") or [""])[0].encode()
            if not hmac.compare_digest(given, self._token):
                if scope["type"] == "http":
                    refusal = PlainTextResponse(
                        "403: this page needs the link with its access token", status_code=403
                    )
                    await refusal(scope, receive, send)
                else:  # a close before the accept: the server answers the handshake with 403
                    await send({"type": "websocket.close", "code": _CLOSE_POLICY})
                return
        await self._app(scope, receive, send)


def _same_origin(websocket: WebSocket) -> bool:
    origin = websocket.headers.get("origin")
    if origin is None:  # not a browser: the token is the whole check
        return True
    return urlsplit(origin).netloc == websocket.headers.get("host")


def build_app(hub: Hub, token: str) -> Starlette:
    """The application for ``hub``, guarded by ``token``."""
    quoted = html.escape(quote(token, safe=""))
    page = _asset("index.html").replace("__TOKEN__", quoted)
    script, style = _asset("app.js"), _asset("app.css")

    async def index(request: Request) -> Response:
        return Response(page, media_type="text/html; charset=utf-8", headers=_SECURITY_HEADERS)

    async def app_js(request: Request) -> Response:
        return Response(
            script, media_type="text/javascript; charset=utf-8", headers=_SECURITY_HEADERS
        )

    async def app_css(request: Request) -> Response:
        return Response(style, media_type="text/css; charset=utf-8", headers=_SECURITY_HEADERS)

    async def live(websocket: WebSocket) -> None:
        if not _same_origin(websocket):
            await websocket.close(code=_CLOSE_POLICY)
            return
        await websocket.accept()
        await _Connection(hub, websocket).run()

    routes = [
        Route("/", index),
        Route("/app.js", app_js),
        Route("/app.css", app_css),
        WebSocketRoute("/ws", live),
    ]
    app = Starlette(routes=routes)
    app.add_middleware(_TokenGuard, token=token)
    return app


class _Connection:
    """One page's websocket: the hub's changes out, the human's actions in."""

    def __init__(self, hub: Hub, websocket: WebSocket) -> None:
        self._hub = hub
        self._websocket = websocket
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._overflowed = False

    def _deliver(self, text: str | None) -> None:
        # Called by whichever thread changed the hub, under the hub's lock: hand over, in order.
        with contextlib.suppress(RuntimeError):  # the loop is closing: the page is going anyway
            self._loop.call_soon_threadsafe(self._enqueue, text)

    def _enqueue(self, item: str | None) -> None:
        if self._overflowed:
            return
        if item is not None and self._queue.qsize() >= MAX_QUEUED:
            self._overflowed = True
            self._queue.put_nowait(_OVERFLOW)
            return
        self._queue.put_nowait(item)

    async def run(self) -> None:
        snapshot, unsubscribe = self._hub.subscribe(self._deliver)
        self._session = json.loads(snapshot)["session"]
        try:
            await self._websocket.send_text(snapshot)
            writer = asyncio.ensure_future(self._write())
            reader = asyncio.ensure_future(self._read())
            _, pending = await asyncio.wait({writer, reader}, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
            for task in (writer, reader):
                with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, OSError):
                    await task
        finally:
            unsubscribe()

    async def _write(self) -> None:
        while True:
            item = await self._queue.get()
            if item is None or item is _OVERFLOW:
                code = _CLOSE_GOING_AWAY if item is None else _CLOSE_TRY_AGAIN
                with contextlib.suppress(RuntimeError, WebSocketDisconnect, OSError):
                    await self._websocket.close(code=code)
                return
            await self._websocket.send_text(item)

    async def _read(self) -> None:
        while True:
            message = await self._websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None and message.get("bytes") is not None:
                text = message["bytes"].decode("utf-8", "replace")
            self._act(text or "")

    def _act(self, text: str) -> None:
        ref: Any = None
        try:
            action = json.loads(text)
            if not isinstance(action, dict):
                raise AnswerRefusedError("an action is a JSON object")
            ref = action.get("ref")
            self._apply(action)
        except (ValueError, AnswerRefusedError) as refusal:
            error = str(refusal) if isinstance(refusal, AnswerRefusedError) else "not JSON"
            self._deliver(json.dumps({"type": "result", "ref": ref, "ok": False, "error": error}))
        else:
            self._deliver(json.dumps({"type": "result", "ref": ref, "ok": True}))

    def _apply(self, action: dict[str, Any]) -> None:
        kind = action.get("type")
        if kind == "stop":
            self._hub.stop(str(action.get("chat")), self._session)
            return
        if kind != "answer":
            raise AnswerRefusedError(f"unknown action {kind!r}")
        verb = action.get("action")
        if verb not in _ACTIONS:
            raise AnswerRefusedError(f"unknown answer {verb!r}")
        text = action.get("text")
        text = text if isinstance(text, str) else ""
        if verb == "approve":
            text = ""
        elif verb == "reject" and not text.strip():
            raise AnswerRefusedError("type the feedback to send with Reject")
        self._hub.answer(str(action.get("request")), text, action=verb, by=self._session)
