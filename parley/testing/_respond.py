"""Turn a scripted answer into the HTTP response the fake server sends: a completion (JSON or
a server-sent-event stream, paced and cut off as scripted), an error, a malformed body, or a
dropped connection."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from ._endpoints import Endpoint
from ._http import DropConnection, HttpResponse
from ._render import Ids, error_body, sse
from ._script import Disconnect, ErrorReply, MalformedReply, Reply, ScriptItem

__all__ = ["error_response", "json_response", "respond"]


def respond(
    item: ScriptItem, body: dict[str, Any], ids: Ids, request_id: str, endpoint: Endpoint
) -> HttpResponse:
    """The response for ``item``, the scripted answer to the ``endpoint`` request ``body``."""
    if isinstance(item, Disconnect):
        return HttpResponse(drop=True)
    if isinstance(item, ErrorReply):
        return error_response(item, request_id)
    if isinstance(item, MalformedReply):
        headers = {"Content-Type": item.content_type, "x-request-id": request_id}
        return HttpResponse(item.status, headers, item.body.encode())
    if body.get("stream") is True:
        return _stream(item, endpoint.events(item, body, ids), request_id)
    return json_response(endpoint.body(item, body, ids), request_id)


def _stream(reply: Reply, events: list[dict[str, Any]], request_id: str) -> HttpResponse:
    chunks = [sse(e) for e in events] + [sse("[DONE]")]
    headers = {
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-cache",
        "x-request-id": request_id,
    }
    if reply.chunk_delay == 0 and reply.drop_after_chunks is None:
        return HttpResponse(200, headers, b"".join(chunks))

    async def paced() -> AsyncIterator[bytes]:
        for i, chunk in enumerate(chunks):
            if reply.drop_after_chunks is not None and i >= reply.drop_after_chunks:
                raise DropConnection
            if i and reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
            yield chunk

    return HttpResponse(200, headers, stream=paced())


def json_response(payload: Any, request_id: str) -> HttpResponse:
    """A 200 with ``payload`` as its JSON body."""
    headers = {"Content-Type": "application/json", "x-request-id": request_id}
    return HttpResponse(200, headers, json.dumps(payload).encode())


def error_response(error: ErrorReply, request_id: str) -> HttpResponse:
    """The API's error response for ``error``."""
    headers = {"Content-Type": "application/json", "x-request-id": request_id, **error.headers}
    return HttpResponse(error.status, headers, error_body(error))
