"""The request side of :class:`~parley.testing.FakeLLMServer`: an HTTP request matched to a
wire protocol (or the model list), checked (auth, JSON, the wire's rules, the context window),
recorded, and answered from the server's script in that wire's shape. A request whose client
goes away while its answer waits is recorded as abandoned."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from typing import Any, Protocol
from urllib.parse import parse_qsl

from ._http import HttpRequest, HttpResponse
from ._prompt_cache import PromptCache
from ._render import Ids
from ._request_log import RecordedRequest, RequestLog
from ._respond import error_response, json_response, respond
from ._script import ErrorReply, Reply, ScriptItem, make_error
from ._validation import RequestError, check_context_window
from ._wire import Wire
from ._wires import WIRES

__all__ = ["Server", "handle"]

_MODEL_PATHS = ("/v1/models", "/models")


class Server(Protocol):
    """What serving reads of the server: its settings, log, ids and script."""

    api_key: str | None
    strict: bool
    models: tuple[str, ...]
    context_window: int | None
    _log: RequestLog
    _ids: Ids
    _prompt_cache: PromptCache

    def _sendable(self, item: ScriptItem, wire: Wire, chat: Mapping[str, Any]) -> ScriptItem: ...

    async def _next_item(self, body: dict[str, Any], wire: Wire) -> ScriptItem: ...


async def handle(server: Server, request: HttpRequest) -> HttpResponse:
    """The response to one HTTP request of ``server``."""
    request_id = server._ids.request()
    path = request.path.rstrip("/")
    for wire in WIRES:
        params = wire.match(path)
        if params is not None:
            if request.method != "POST":
                return error_response(
                    wire,
                    make_error(405, f"Method {request.method} not allowed on {path}"),
                    request_id,
                )
            return await _complete(server, request, request_id, wire, params)
    if path in _MODEL_PATHS or any(path.startswith(p + "/") for p in _MODEL_PATHS):
        return _models(server, request, path, request_id)
    return error_response(
        WIRES[0],
        make_error(
            404, f"Unknown request URL: {request.method} {request.path}.", code="unknown_url"
        ),
        request_id,
    )


def _unauthorized(
    server: Server, request: HttpRequest, query: Mapping[str, str], wire: Wire, request_id: str
) -> HttpResponse | None:
    if server.api_key is None or wire.authorized(request.headers, query, server.api_key):
        return None
    return error_response(wire, wire.unauthorized(), request_id)


def _models(server: Server, request: HttpRequest, path: str, request_id: str) -> HttpResponse:
    openai = WIRES[0]
    denied = _unauthorized(server, request, {}, openai, request_id)
    if denied is not None:
        return denied
    data = [
        {"id": m, "object": "model", "created": 0, "owned_by": "parley-testing"}
        for m in server.models
    ]
    if path in _MODEL_PATHS:
        return json_response({"object": "list", "data": data}, request_id)
    wanted = path.rsplit("/", 1)[1]
    for model in data:
        if model["id"] == wanted:
            return json_response(model, request_id)
    return error_response(
        openai, make_error(404, f"The model '{wanted}' does not exist"), request_id
    )


async def _complete(
    server: Server, request: HttpRequest, request_id: str, wire: Wire, params: Mapping[str, str]
) -> HttpResponse:
    query = dict(parse_qsl(request.query))
    try:
        body: Any = json.loads(request.body)
    except (ValueError, UnicodeDecodeError) as e:
        body = None
        error: ErrorReply | None = make_error(
            400,
            f"We could not parse the JSON body of your request. ({e})",
            code="invalid_json",
        )
    else:
        error = None
    chat = _chat_of(wire, body, params)
    record = RecordedRequest(
        request.method,
        request.path,
        dict(request.headers),
        request.body,
        body,
        time.monotonic(),
        request.query,
        wire.protocol,
        chat,
    )
    server._log.receive(record)
    denied = _unauthorized(server, request, query, wire, request_id)
    if denied is not None:
        return denied
    if error is None:
        try:
            wire.validate(body, params, strict=server.strict)
            if chat is None:
                raise RequestError(f"FakeLLMServer could not read this {wire.what} request.")
            if server.context_window is not None:
                check_context_window(chat, server.context_window)
        except RequestError as e:
            error = make_error(e.status, e.message, param=e.param, code=e.code, type=e.type)
    if error is not None or chat is None:
        assert error is not None
        return error_response(wire, error, request_id)
    try:
        item = server._sendable(await server._next_item(chat, wire), wire, chat)
        if isinstance(item, Reply):
            item = wire.cached(item, body, chat, server._prompt_cache)
        if item.delay:
            await asyncio.sleep(item.delay)
    except asyncio.CancelledError:
        if request.abandoned:
            server._log.abandon(record)
        raise
    return respond(
        item,
        wire,
        chat,
        stream=wire.streams(body, params, query),
        query=query,
        ids=server._ids,
        request_id=request_id,
    )


def _chat_of(wire: Wire, body: Any, params: Mapping[str, str]) -> dict[str, Any] | None:
    """``body`` as OpenAI's chat-completions body, or None where it cannot be read as one
    (validation then says what is wrong with it)."""
    if not isinstance(body, dict):
        return None
    try:
        return wire.to_chat(body, params)
    except (LookupError, TypeError, ValueError, AttributeError):
        return None
