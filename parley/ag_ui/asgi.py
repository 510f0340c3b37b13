"""The endpoint: a Starlette ``HTTPEndpoint`` that takes a ``RunAgentInput`` by POST and answers
with the run's events as server-sent events (AG2's ``autogen.ag_ui.asgi.build_asgi``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ag_ui.core import RunAgentInput
from ag_ui.encoder import EventEncoder
from pydantic import ValidationError
from starlette.endpoints import HTTPEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

if TYPE_CHECKING:
    from .adapter import AGUIStream

__all__ = ["build_asgi"]

_MAX_BODY = 16 << 20  # bytes: a conversation with inline images, not more


def build_asgi(stream: AGUIStream) -> type[HTTPEndpoint]:
    """An endpoint class serving ``stream``: mount it with ``Route(path, endpoint)``."""

    class AGUIEndpoint(HTTPEndpoint):
        async def post(self, request: Request) -> Response:
            body = await request.body()
            if len(body) > _MAX_BODY:
                return JSONResponse(
                    {"error": f"the request body is over {_MAX_BODY} bytes"}, status_code=413
                )
            try:
                incoming = RunAgentInput.model_validate_json(body)
            except ValidationError as error:
                # Not a run at all: no run id to report a RUN_ERROR under, so plain HTTP.
                return JSONResponse(
                    {"error": "the body is not an AG-UI RunAgentInput", "detail": str(error)},
                    status_code=422,
                )
            accept = request.headers.get("accept")
            return StreamingResponse(
                stream.dispatch(incoming, accept=accept),
                media_type=EventEncoder(accept=accept).get_content_type(),  # type: ignore[arg-type]
                headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
            )

    return AGUIEndpoint
