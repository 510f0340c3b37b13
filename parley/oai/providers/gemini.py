"""Google's Gemini models as a ``ModelClient`` (``api_type`` "google" or "gemini"), over the
google-genai SDK's async API.

A config entry, as AutoGen's::

    {"api_type": "google", "model": "gemini-2.0-flash", "api_key": "...",
     "safety_settings": [...], "temperature": 0.5, "max_tokens": 1000}

Without an ``api_key`` (and with Vertex AI's ``project_id``, ``location``, ``credentials`` or
``google_application_credentials``, or ``use_vertexai``) the client talks to Vertex AI instead,
as AutoGen's did: see :mod:`._gemini_vertex`.

A ``response_format`` is sent as ``response_mime_type`` "application/json" with the schema as
``response_json_schema`` (:func:`._gemini_messages.generation_config`).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar

from ...exceptions import ModelAPIError
from .._reply_checks import malformed, reading_reply
from .._transport_errors import header_dict
from ._base import (
    api_error,
    chunk,
    collect,
    completion,
    new_id,
    require,
    tool_call,
)
from ._gemini_faces import concat_parts, gemini_contents, json_or_text, safety_settings
from ._gemini_messages import (
    finish_reason,
    generation_config,
    made_up_call_id,
    nests_media,
    to_contents,
)
from ._gemini_vertex import api_key, check_credentials, uses_vertexai, vertex_settings
from ._sdk_calls import PooledClient, sdk_errors

__all__ = ["GeminiClient"]


class GeminiClient(PooledClient):
    """AutoGen's ``GeminiClient``: OpenAI-shaped requests to Gemini, its answers as
    ``ChatCompletion``s."""

    PROVIDER: ClassVar[str] = "google"
    SDK: ClassVar[str] = "google.genai"
    EXTRA: ClassVar[str] = "gemini"
    STRUCTURED_OUTPUT: ClassVar[str] = "native"  # response_json_schema (_gemini_messages)

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self._types = require("google.genai.types", "gemini")
        # Decided here, as AutoGen did: an api_key with Vertex AI's settings fails at once.
        self._vertexai = uses_vertexai(self._config)
        check_credentials(self._config)

    @property
    def use_vertexai(self) -> bool:
        """Whether this client talks to Vertex AI rather than the Gemini API (AutoGen's)."""
        return self._vertexai

    @property
    def api_key(self) -> str | None:
        """AutoGen's ``api_key``: the config's key, else (on the Gemini API) the environment's
        ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY``; None on Vertex AI with Google credentials."""
        return api_key(self._config)

    # -- AutoGen's internals, as faces of what this client sends (see _gemini_faces) ------

    def _oai_messages_to_gemini_messages(self, messages: list[dict[str, Any]]) -> list[Any]:
        return gemini_contents(messages)

    def _concat_parts(self, parts: list[Any]) -> list[Any]:
        return concat_parts(parts)

    @staticmethod
    def _to_vertexai_safety_settings(settings: Any) -> Any:
        return safety_settings(settings)

    def _to_json(self, text: Any) -> Any:
        return json_or_text(text)

    async def _close_sdk(self, client: Any) -> None:
        await client.aio.aclose()
        client.close()

    def _new_sdk(self) -> Any:
        import httpx

        config = self._config
        types = self._types
        http: dict[str, Any] = {
            "retry_options": types.HttpRetryOptions(attempts=1),
            # httpx rather than aiohttp (which warns about the SDK's session subclass).
            "async_client_args": {"transport": httpx.AsyncHTTPTransport()},
        }
        if config.get("base_url"):
            http["base_url"] = str(config["base_url"])
        if config.get("timeout") is not None:
            http["timeout"] = int(float(config["timeout"]) * 1000)  # milliseconds
        kwargs: dict[str, Any] = {"http_options": types.HttpOptions(**http)}
        if self._vertexai:
            kwargs.update(vertex_settings(config))
        else:
            kwargs["api_key"] = self.api_key
        return self._module.Client(**kwargs)

    def _request(self, params: Mapping[str, Any]) -> dict[str, Any]:
        model = params.get("model")
        system, contents = to_contents(
            params.get("messages") or [], nested_media=nests_media(model)
        )
        config = generation_config(params, system)
        if params.get("timeout") is not None:
            config["http_options"] = {"timeout": int(float(params["timeout"]) * 1000)}
        # Checked here, where a bad setting (a config's safety_settings, say) raises the SDK's
        # own error: inside the call it would read as a malformed answer (_reply_checks).
        checked = self._types.GenerateContentConfig.model_validate(config)
        return {"model": str(model), "contents": contents, "config": checked}

    async def a_create(self, params: dict[str, Any]) -> Any:
        request = self._request(params)
        models = self._sdk().aio.models
        with reading_reply(self.PROVIDER):
            if params.get("stream"):
                return await collect(self._chunks(request), params)
            with sdk_errors(self.PROVIDER, self._error):
                answer = await models.generate_content(**request)
            return self._completion(answer, request["model"])

    def _completion(self, answer: Any, model: str) -> Any:
        text, calls, reason = _read_candidate(answer)
        if not _has_parts(answer) and not _says_why(reason):
            raise malformed(self.PROVIDER, _empty(answer, reason))
        prompt, done = _token_counts(answer.usage_metadata)
        return completion(
            model=answer.model_version or model,
            content=text if text or not calls else None,
            tool_calls=calls,
            finish_reason=finish_reason(reason, bool(calls)),
            prompt_tokens=prompt,
            completion_tokens=done,
            response_id=answer.response_id and f"chatcmpl-{answer.response_id}",
            usage_details=_usage_details(answer.usage_metadata),
        )

    async def _chunks(self, request: dict[str, Any]) -> AsyncIterator[Any]:
        head = {"response_id": new_id(), "model": request["model"], "created": int(time.time())}
        calls = 0
        reason: Any = None
        usage: tuple[int, int] | None = None
        details: dict[str, Any] | None = None
        said = False
        with sdk_errors(self.PROVIDER, self._error):
            stream = await self._sdk().aio.models.generate_content_stream(**request)
            async for piece in stream:
                text, found, piece_reason = _read_candidate(piece, first_call=calls)
                if text:
                    yield chunk(**head, content=text)
                for call in found:
                    function = call["function"]
                    delta = {"index": calls, "id": call["id"], "function": function}
                    yield chunk(**head, tool_call_delta=delta)
                    calls += 1
                reason = piece_reason or reason
                if piece.usage_metadata is not None:
                    usage = _token_counts(piece.usage_metadata)
                    details = _usage_details(piece.usage_metadata)
                said = said or _has_parts(piece)
            if not said and not _says_why(reason):
                raise malformed(self.PROVIDER, "the stream had no text, no call, no reason")
        yield chunk(**head, finish_reason=finish_reason(reason, calls > 0))
        if usage is not None:
            yield chunk(**head, usage=usage, usage_details=details)

    def _error(self, error: Exception) -> ModelAPIError | None:
        errors = require("google.genai.errors", "gemini")
        if isinstance(error, errors.APIError):
            response = getattr(error, "response", None)
            return api_error(
                self.PROVIDER,
                str(error.message or error.status or "request failed"),
                status=int(error.code) if error.code else None,
                headers=header_dict(getattr(response, "headers", None)),
                code=error.status,
            )
        return None


# Finish reasons that say nothing about why an answer is empty.
_NO_REASON = frozenset({"STOP", "FINISH_REASON_UNSPECIFIED", "None"})


def _has_parts(answer: Any) -> bool:
    """Whether the answer's first candidate has content parts (an empty text is a part)."""
    candidates = answer.candidates or []
    content = candidates[0].content if candidates else None
    return bool(content is not None and content.parts)


def _says_why(reason: Any) -> bool:
    """Whether Gemini's finish reason explains an answer without content (a safety block, the
    token limit...): an empty answer that does not say why is no reply."""
    return str(getattr(reason, "name", reason)) not in _NO_REASON


def _empty(answer: Any, reason: Any) -> str:
    if not answer.candidates:
        return "no candidates, and no prompt_feedback saying that the prompt was blocked"
    name = getattr(reason, "name", reason)
    return f"the candidate has no content, and its finish reason ({name}) does not say why"


def _token_counts(usage: Any) -> tuple[int, int]:
    if usage is None:
        return 0, 0
    # Thinking tokens are billed as output.
    done = (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
    return usage.prompt_token_count or 0, done


def _usage_details(usage: Any) -> dict[str, Any] | None:
    """Gemini's implicit-cache hits and thinking tokens in OpenAI's usage details (reported,
    not priced apart: they are part of the prompt and output counts)."""
    cached = int(getattr(usage, "cached_content_token_count", None) or 0)
    thoughts = int(getattr(usage, "thoughts_token_count", None) or 0)
    details: dict[str, Any] = {}
    if cached:
        details["prompt_tokens_details"] = {"cached_tokens": cached}
    if thoughts:
        details["completion_tokens_details"] = {"reasoning_tokens": thoughts}
    return details or None


def _read_candidate(answer: Any, first_call: int = 0) -> tuple[str, list[dict[str, Any]], Any]:
    """The text, tool calls and finish reason of an answer's first candidate. An answer whose
    prompt was blocked has no candidate: it finishes as filtered content (the provider said
    why it is empty)."""
    candidates = answer.candidates or []
    if not candidates:
        feedback = answer.prompt_feedback
        blocked = feedback is not None and feedback.block_reason is not None
        return "", [], "SAFETY" if blocked else None
    candidate = candidates[0]
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    parts = candidate.content.parts if candidate.content is not None else None
    for part in parts or ():
        if part.text and not part.thought:
            texts.append(part.text)
        call = part.function_call
        if call is not None:
            args = dict(call.args or {})
            index = first_call + len(calls)
            call_id = call.id or made_up_call_id(answer.response_id, index, call.name, args)
            calls.append(tool_call(call_id, str(call.name), json.dumps(args)))
    return "".join(texts), calls, candidate.finish_reason


PRICES = GeminiClient.PRICES  # its table in prices.json, at AutoGen's module path too
