"""Ollama's chat API (``POST /api/chat``) as a wire: OpenAI-like messages with tool-call
arguments as objects and images as base64 lists, NDJSON streaming (Ollama streams unless
``stream`` is false), ``prompt_eval_count``/``eval_count`` and ``{"error": "..."}``."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from ._render import Ids, pieces
from ._script import ErrorReply, Reply
from ._validation import RequestError
from ._wire import (
    Answer,
    Wire,
    answer,
    arguments_object,
    bearer,
    data_uri,
    json_bytes,
    schema_format,
)

__all__ = ["Ollama"]


def _chat_message(m: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.get("role"), "content": m.get("content", "")}
    images = m.get("images")
    if images:
        parts: list[dict[str, Any]] = [{"type": "text", "text": out["content"] or ""}]
        parts += [
            {"type": "image_url", "image_url": {"url": data_uri("image/png", i)}} for i in images
        ]
        out["content"] = parts
    calls = m.get("tool_calls")
    if calls:
        out["tool_calls"] = [
            {
                "id": c.get("id") or f"call_{i}",
                "type": "function",
                "function": {
                    "name": c["function"]["name"],
                    "arguments": json.dumps(c["function"].get("arguments", {})),
                },
            }
            for i, c in enumerate(calls)
        ]
    if m.get("role") == "tool":
        out["tool_call_id"] = m.get("tool_call_id") or m.get("tool_name") or ""
    return out


class Ollama(Wire):
    protocol: ClassVar[str] = "ollama"
    what: ClassVar[str] = "Ollama chat"
    stream_type: ClassVar[str] = "application/x-ndjson"
    paths: ClassVar[tuple[str, ...]] = ("/api/chat",)

    def authorized(self, headers: Mapping[str, str], query: Mapping[str, str], key: str) -> bool:
        return bearer(headers, key)

    def unauthorized(self) -> ErrorReply:
        from ._script import make_error

        return make_error(401, "unauthorized")

    def validate(self, body: Any, params: Mapping[str, str], *, strict: bool) -> None:
        if not isinstance(body, Mapping):
            raise RequestError("invalid request body")
        if not body.get("model"):
            raise RequestError("model is required")
        messages = body.get("messages", [])
        if not isinstance(messages, list):
            raise RequestError("json: cannot unmarshal messages")
        for m in messages:
            if strict and (
                not isinstance(m, Mapping)
                or m.get("role") not in ("system", "user", "assistant", "tool")
            ):
                raise RequestError(
                    f"invalid role: {m.get('role') if isinstance(m, Mapping) else m}"
                )
        fmt = body.get("format")
        if strict and fmt not in (None, "", "json") and not isinstance(fmt, Mapping):
            raise RequestError(f'invalid format: expected "json" or a JSON schema, got {fmt!r}')

    def to_chat(self, body: Any, params: Mapping[str, str]) -> dict[str, Any]:
        chat: dict[str, Any] = {
            "model": body.get("model"),
            "messages": [_chat_message(m) for m in body.get("messages", [])],
            "stream": body.get("stream", True) is not False,
        }
        if body.get("tools"):
            chat["tools"] = body["tools"]
        options = body.get("options") or {}
        chat.update(self.names.chat_options(options))
        fmt = body.get("format")
        if fmt == "json" or isinstance(fmt, Mapping):
            chat["response_format"] = schema_format(fmt if isinstance(fmt, Mapping) else None)
        return chat

    def streams(self, body: Any, params: Mapping[str, str], query: Mapping[str, str]) -> bool:
        return body.get("stream", True) is not False

    def body(self, reply: Reply, chat: Mapping[str, Any], ids: Ids) -> Any:
        a = answer(reply, chat, ids)
        return {
            **_head(a),
            "message": _message(a, a.choice.content or ""),
            **_done(a, self.names.finish_reason(a)),
        }

    def frames(
        self, reply: Reply, chat: Mapping[str, Any], ids: Ids, query: Mapping[str, str]
    ) -> Iterator[bytes]:
        a = answer(reply, chat, ids)
        for piece in pieces(a.choice.content or ""):
            yield _line(
                {**_head(a), "message": {"role": "assistant", "content": piece}, "done": False}
            )
        if a.choice.tool_calls:
            yield _line({**_head(a), "message": _message(a, ""), "done": False})
        yield _line(
            {
                **_head(a),
                "message": {"role": "assistant", "content": ""},
                **_done(a, self.names.finish_reason(a)),
            }
        )

    def error_payload(self, error: ErrorReply, message: str) -> Any:
        return {"error": message}


def _line(payload: Any) -> bytes:
    return json_bytes(payload) + b"\n"


def _head(a: Answer) -> dict[str, Any]:
    created = time.strftime("%Y-%m-%dT%H:%M:%S.000000000Z", time.gmtime())
    return {"model": a.model, "created_at": created}


def _message(a: Answer, content: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if a.choice.tool_calls:
        message["tool_calls"] = [
            {
                "id": cid,
                "function": {
                    "index": i,
                    "name": tc.name,
                    "arguments": arguments_object(tc.arguments),
                },
            }
            for i, (tc, cid) in enumerate(zip(a.choice.tool_calls, a.call_ids, strict=True))
        ]
    return message


def _done(a: Answer, reason: str) -> dict[str, Any]:
    return {
        "done": True,
        "done_reason": reason,
        "total_duration": 1000,
        "load_duration": 0,
        "prompt_eval_count": a.prompt_tokens,
        "prompt_eval_duration": 500,
        "eval_count": a.completion_tokens,
        "eval_duration": 500,
    }
