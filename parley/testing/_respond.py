"""Turn a scripted answer into the HTTP response the fake server sends in a wire's protocol: a
completion (JSON or a stream, paced and cut off as scripted), an error, a malformed body, or a
dropped connection."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from ._http import DropConnection, HttpResponse
from ._render import Ids
from ._script import Disconnect, ErrorReply, MalformedReply, Reply, ScriptItem
from ._wire import Wire

__all__ = ["error_response", "json_response", "respond"]


def respond(
    item: ScriptItem,
    wire: Wire,
    chat: Mapping[str, Any],
    *,
    stream: bool,
    query: Mapping[str, str],
    ids: Ids,
    request_id: str,
) -> HttpResponse:
    """The response for ``item``, the scripted answer to a ``wire`` request (``chat`` is the
    request as OpenAI's chat-completions body; ``stream`` whether it asked for a stream)."""
    if isinstance(item, Disconnect):
        return HttpResponse(drop=True)
    if isinstance(item, ErrorReply):
        return error_response(wire, item, request_id)
    if isinstance(item, MalformedReply):
        headers = {"Content-Type": item.content_type, "x-request-id": request_id}
        return HttpResponse(item.status, headers, item.body.encode())
    if stream:
        return _stream(item, wire.frames(item, chat, ids, query), wire.stream_type, request_id)
    return json_response(wire.body(item, chat, ids), request_id)


def _stream(reply: Reply, frames: Iterator[bytes], kind: str, request_id: str) -> HttpResponse:
    headers = {"Content-Type": kind, "Cache-Control": "no-cache", "x-request-id": request_id}
    if reply.chunk_delay == 0 and reply.drop_after_chunks is None:
        return HttpResponse(200, headers, b"".join(frames))

    async def paced() -> AsyncIterator[bytes]:
        for i, frame in enumerate(frames):
            if reply.drop_after_chunks is not None and i >= reply.drop_after_chunks:
                raise DropConnection
            if i and reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
            yield frame

    return HttpResponse(200, headers, stream=paced())


def json_response(payload: Any, request_id: str) -> HttpResponse:
    """A 200 with ``payload`` as its JSON body."""
    headers = {"Content-Type": "application/json", "x-request-id": request_id}
    return HttpResponse(200, headers, json.dumps(payload).encode())


def error_response(wire: Wire, error: ErrorReply, request_id: str) -> HttpResponse:
    """The provider's error response for ``error``; the script's headers win."""
    headers, body = wire.error(error)
    return HttpResponse(
        error.status, {**headers, "x-request-id": request_id, **error.headers}, body
    )
