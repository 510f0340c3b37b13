"""A ModelClient over OpenAI's Responses API (``POST /responses``), chosen by a config entry's
``api_type: "responses"`` (AG2's name for it).

The request is parley's chat-completions request translated into the Responses API's
(:mod:`parley.oai.providers._responses_items`) and posted to ``/responses`` through the openai
client's lower-level request path, as the chat client posts (``responses.create`` walks every
input item through a typed transform first: 0.4 s a request at 400 messages, for a body parley
has already built); the answer comes back as a ``ChatCompletion``, so cache, cost, usage,
retries, fallback, logging and agents treat it as any other. The client's settings,
credentials, connection pools (one per event loop) and errors are the chat client's
(:class:`~parley.oai.providers._openai.OpenAIClient`): an SDK error leaves as it is, for
parley's retry policy to read.

Before it is translated, a request is fitted to its model's profile and to what the Responses
API takes (:func:`parley.oai._profiles.adapt_responses`: the chat path's rules, chat-only
parameters dropped or refused). parley stores nothing at OpenAI unless asked: ``store`` is sent
as ``false`` when the config does not set it (OpenAI's default is ``true``: every response kept
for 30 days), since parley sends the whole history each turn anyway. A reasoning model asked
not to store is asked for its reasoning items' ``encrypted_content``
(``include: ["reasoning.encrypted_content"]``), the only form in which they can go back on the
next turn.

A streamed request's text deltas (``response.output_text.delta`` events) are echoed to the
IOStream as they arrive, through the same collector as chat streams; the reply, tool calls with
their streamed arguments included, is the ``response.completed`` event's response.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from ..._credentials import scrubbing_errors
from .._profiles import is_reasoning_model
from .._reply_checks import check_reply, malformed
from .._streaming import collect_stream
from ._base import chunk
from ._openai import OpenAIClient, request_options
from ._responses_items import REASONING_KEY, chat_completion, responses_request

__all__ = ["OpenAIResponsesClient"]

_PROVIDER = "openai"
_ENCRYPTED_REASONING = "reasoning.encrypted_content"


def _request_body(params: Mapping[str, Any], reasoning: bool) -> dict[str, Any]:
    """The ``/responses`` body (request options such as ``timeout`` still in it) for fitted
    chat ``params``; ``reasoning``: the model returns reasoning items to keep."""
    body = responses_request(params)
    if body.get("store") is None:
        body["store"] = False
    if body["store"] is False and reasoning:
        include = list(body.get("include") or ())
        if _ENCRYPTED_REASONING not in include:
            body["include"] = [*include, _ENCRYPTED_REASONING]
    return body


class OpenAIResponsesClient(OpenAIClient):
    """The ModelClient for OpenAI's Responses API (``api_type: "responses"``)."""

    async def a_create(self, params: dict[str, Any]) -> Any:
        """Send one request to ``/responses``; the answer as a ``ChatCompletion`` (a streamed
        one echoed as it comes, then collected)."""
        return await self._responses_create(params)

    @scrubbing_errors
    async def _responses_create(self, params: dict[str, Any]) -> Any:
        from openai import AsyncStream
        from openai.types.chat import ChatCompletion
        from openai.types.responses import Response, ResponseStreamEvent

        client = self._async_client()
        fitted = self.adapt.responses(params)
        reasoning = is_reasoning_model(self.adapt.known(fitted.get("model")))
        body, options = request_options(_request_body(fitted, reasoning))
        try:
            if not body.get("stream"):
                response = await client.post(
                    "/responses", body=body, cast_to=Response, options=options
                )
                return check_reply(chat_completion(_finished(response)), ChatCompletion, _PROVIDER)
            stream = await client.post(
                "/responses",
                body=body,
                cast_to=Response,
                options=options,
                stream=True,
                stream_cls=AsyncStream[ResponseStreamEvent],
            )
            try:
                final: list[Any] = []
                await collect_stream(_chunks(stream, final), params)
            finally:
                await stream.close()
            if not final:
                raise malformed(_PROVIDER, "the Responses stream ended without a response")
            return check_reply(chat_completion(_finished(final[0])), ChatCompletion, _PROVIDER)
        except json.JSONDecodeError as e:
            raise malformed(
                _PROVIDER, f"the answer to model {params.get('model')!r} is not valid JSON: {e}"
            ) from e

    def message_retrieval(self, response: Any) -> list[Any]:
        """Per choice: the message object if it calls tools or carries reasoning items (kept
        for the next turn), else its text."""
        out: list[Any] = []
        for choice in response.choices:
            message = choice.message
            if getattr(message, "tool_calls", None) or getattr(message, REASONING_KEY, None):
                out.append(message)
            else:
                out.append(message.content)
        return out


def _finished(response: Any) -> Any:
    """``response``, or the error of a response that failed."""
    if getattr(response, "status", None) == "failed":
        error = getattr(response, "error", None)
        what = getattr(error, "message", None) or "no reason given"
        raise malformed(_PROVIDER, f"the response failed: {what}")
    return response


async def _chunks(stream: Any, final: list[Any]) -> AsyncIterator[Any]:
    """The Responses stream's text deltas as chat chunks (for the echo); its finished response
    put in ``final``."""
    head: dict[str, Any] = {"response_id": "resp", "model": "", "created": 0}
    async for event in stream:
        kind = getattr(event, "type", None)
        if kind == "response.created":
            created = event.response
            head = {
                "response_id": created.id,
                "model": created.model,
                "created": int(created.created_at),
            }
        elif kind == "response.output_text.delta":
            yield chunk(**head, content=event.delta)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            final.append(event.response)
        elif kind == "error":
            raise malformed(_PROVIDER, f"the stream reported an error: {event.message}")
    yield chunk(**head, finish_reason="stop")
