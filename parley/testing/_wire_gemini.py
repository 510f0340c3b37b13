"""Gemini's ``generateContent`` and ``streamGenerateContent`` as a wire (``/v1beta/models/...``;
the google-genai SDK given a ``base_url`` asks ``/v1/models/...``; on Vertex AI
``/v1beta1/projects/<project>/locations/<location>/publishers/google/models/...`` with a bearer
token): ``contents`` of ``parts``,
``functionCall``/``functionResponse``, ``usageMetadata``, SSE with ``alt=sse`` (else a JSON
array), Google's error shape."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from ._render import Ids, pieces
from ._script import ErrorReply, Reply
from ._validation import RequestError
from ._wire import (
    Answer,
    OpenAIMessage,
    Wire,
    answer,
    arguments_object,
    bearer,
    data_uri,
    function_tool,
    json_bytes,
    openai_chat,
    schema_format,
)

__all__ = ["Gemini"]


def _text(parts: Any) -> str:
    return "".join(str(p.get("text", "")) for p in parts or () if isinstance(p, Mapping))


def _chat_messages(content: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = OpenAIMessage("assistant" if content.get("role") == "model" else "user")
    for part in content.get("parts") or ():
        blob = _blob(part)
        if "text" in part:
            out.text(part["text"])
        elif blob is not None:
            out.image(_blob_uri(blob))
        elif "functionCall" in part:
            call = part["functionCall"]
            out.call(call.get("id") or call.get("name"), call.get("name"), call.get("args", {}))
        elif "functionResponse" in part:
            response = part["functionResponse"]
            out.result(
                response.get("id") or response.get("name"),
                json.dumps(response.get("response", {})),
            )
            # Gemini 3's images inside a result reach the responder as OpenAI's chat carries
            # them: in the user message after the results.
            for media in response.get("parts") or ():
                blob = _blob(media) if isinstance(media, Mapping) else None
                if blob is not None:
                    out.image(_blob_uri(blob))
    return out.messages()


# The API reads its JSON fields in either spelling (protobuf's JSON mapping), and the SDK sends
# some nested ones in their proto names (``inline_data``, ``mime_type``).
def _blob(part: Mapping[str, Any]) -> Mapping[str, Any] | None:
    blob = part.get("inlineData", part.get("inline_data"))
    return blob if isinstance(blob, Mapping) else None


def _blob_uri(blob: Mapping[str, Any]) -> str:
    return data_uri(blob.get("mimeType", blob.get("mime_type")), blob.get("data"))


_GENERATION = re.compile(r"gemini-(\d+)")


def _check_media(parts: list[Any], model: str, i: int) -> None:
    """Images inside a ``functionResponse`` (its ``parts``) are read by Gemini 3 and later;
    an earlier model refuses them (so does the fake: the client must send those models the
    images elsewhere)."""
    found = _GENERATION.search(model)
    if found is not None and int(found.group(1)) >= 3:
        return
    for j, part in enumerate(parts):
        response = part.get("functionResponse") if isinstance(part, Mapping) else None
        if isinstance(response, Mapping) and response.get("parts"):
            raise RequestError(
                f"contents[{i}].parts[{j}].functionResponse.parts: multimodal function "
                f"responses are not supported by model {model!r} (Gemini 3 and later only)."
            )


class Gemini(Wire):
    protocol: ClassVar[str] = "gemini"
    stream_action: ClassVar[str | None] = "streamGenerateContent"
    what: ClassVar[str] = "Gemini generateContent"
    pattern: ClassVar[re.Pattern[str] | None] = re.compile(
        r"^/v1(?:beta1?|alpha)?/"
        r"(?:projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/publishers/google/)?"
        r"models/(?P<model>[^/:]+):(?P<action>generateContent|streamGenerateContent)$"
    )

    def authorized(self, headers: Mapping[str, str], query: Mapping[str, str], key: str) -> bool:
        # Vertex AI's callers send an OAuth access token (the server's key stands for one).
        return key in (headers.get("x-goog-api-key"), query.get("key")) or bearer(headers, key)

    def unauthorized(self) -> ErrorReply:
        from ._script import make_error

        return make_error(400, "API key not valid. Please pass a valid API key.")

    def validate(self, body: Any, params: Mapping[str, str], *, strict: bool) -> None:
        if not isinstance(body, Mapping):
            raise RequestError("Invalid JSON payload received.")
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:
            raise RequestError("* GenerateContentRequest.contents: contents is not specified\n")
        if not strict:
            return
        _check_output_schema(body.get("generationConfig") or {})
        pending = False
        for i, content in enumerate(contents):
            role = content.get("role", "user") if isinstance(content, Mapping) else None
            if role not in ("user", "model"):
                raise RequestError(
                    f"Please use a valid role: user, model. (got {role!r} in contents[{i}])"
                )
            parts = content.get("parts") or []
            _check_media(parts, str(params.get("model") or ""), i)
            answers = any("functionResponse" in p for p in parts)
            if answers and not pending:
                raise RequestError(
                    "Please ensure that function response turn comes immediately after a "
                    "function call turn."
                )
            pending = role == "model" and any("functionCall" in p for p in parts)

    def to_chat(self, body: Any, params: Mapping[str, str]) -> dict[str, Any]:
        system = body.get("systemInstruction")
        if system and not isinstance(system, str):
            system = _text(system.get("parts"))
        functions = [
            f for t in body.get("tools") or () for f in t.get("functionDeclarations") or ()
        ]
        tools = [
            function_tool(
                f.get("name"),
                f.get("description"),
                f.get("parameters") or f.get("parametersJsonSchema"),
            )
            for f in functions
        ]
        generation = body.get("generationConfig") or {}
        options = self.names.chat_options(generation)
        if generation.get("responseMimeType") == "application/json":
            schema = generation.get("responseJsonSchema") or generation.get("responseSchema")
            options["response_format"] = schema_format(schema)
        return openai_chat(
            params["model"],
            system,
            (m for content in body["contents"] for m in _chat_messages(content)),
            tools,
            stream=self.streams(body, params, {}),
            **options,
        )

    def body(self, reply: Reply, chat: Mapping[str, Any], ids: Ids) -> Any:
        a = answer(reply, chat, ids)
        parts: list[dict[str, Any]] = [{"text": a.choice.content}] if a.choice.content else []
        out = _response(a, parts + _calls(a), finish=self.names.finish_reason(a))
        _cached(out, reply)
        return out

    def frames(
        self, reply: Reply, chat: Mapping[str, Any], ids: Ids, query: Mapping[str, str]
    ) -> Iterator[bytes]:
        a = answer(reply, chat, ids)
        chunks = [[{"text": p}] for p in pieces(a.choice.content or "")]
        if a.choice.tool_calls:
            chunks.append(_calls(a))  # Gemini sends a function call whole
        chunks = chunks or [[{"text": ""}]]
        *pending, last = chunks
        responses = [_response(a, c) for c in pending]
        responses.append(_response(a, last, finish=self.names.finish_reason(a)))
        _cached(responses[-1], reply)
        if query.get("alt") == "sse":
            for r in responses:
                yield b"data: " + json_bytes(r) + b"\r\n\r\n"
            return
        for i, r in enumerate(responses):  # without alt=sse: one JSON array, streamed
            yield (b"[" if i == 0 else b",\r\n") + json_bytes(r)
        yield b"]"

    def error_headers(self, error: ErrorReply) -> dict[str, str]:
        return {"Content-Type": "application/json; charset=UTF-8"}

    def error_payload(self, error: ErrorReply, message: str) -> Any:
        status = self.names.error_name(error.status)
        return {"error": {"code": error.status, "message": message, "status": status}}


def _calls(a: Answer) -> list[dict[str, Any]]:
    return [
        {"functionCall": {"id": cid, "name": tc.name, "args": arguments_object(tc.arguments)}}
        for tc, cid in zip(a.choice.tool_calls, a.call_ids, strict=True)
    ]


def _cached(response: dict[str, Any], reply: Reply) -> None:
    """A scripted ``cached_tokens`` as Gemini reports its implicit-cache hits (part of the
    prompt count)."""
    cached = (reply.usage or {}).get("cached_tokens")
    if cached:
        response["usageMetadata"]["cachedContentTokenCount"] = int(cached)


def _response(a: Answer, parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    """A response of ``parts``; the last one of an answer has its ``finish`` reason and usage."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": a.model}
    if finish is not None:
        candidate["finishReason"] = finish
        out["usageMetadata"] = {
            "promptTokenCount": a.prompt_tokens,
            "candidatesTokenCount": a.completion_tokens,
            "totalTokenCount": a.prompt_tokens + a.completion_tokens,
        }
    return out


_SCHEMA_FIELDS = ("responseSchema", "responseJsonSchema")


def _check_output_schema(generation: Mapping[str, Any]) -> None:
    """Gemini's rules for an output schema: one of its two fields, with the JSON MIME type."""
    given = [f for f in _SCHEMA_FIELDS if generation.get(f) is not None]
    if len(given) > 1:
        raise RequestError(
            "* GenerateContentRequest.generation_config: response_schema and "
            "response_json_schema cannot both be set\n"
        )
    if given and generation.get("responseMimeType") != "application/json":
        raise RequestError(
            f"* GenerateContentRequest.generation_config.{given[0]}: a response schema is "
            "only supported with response_mime_type application/json\n"
        )
    for name in given:
        if not isinstance(generation[name], Mapping):
            raise RequestError(
                f"Invalid JSON payload received. Unknown value for generation_config.{name}: "
                "expected an object\n"
            )
