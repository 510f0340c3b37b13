"""Cohere's v2 chat API (``POST /v2/chat``) as a wire: OpenAI-like messages and tool calls,
``finish_reason`` in capitals, usage in ``billed_units`` and ``tokens``, and its SSE stream of
typed events (message-start, content-*, tool-call-*, message-end)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from ._render import Ids, pieces
from ._script import ErrorReply, Reply
from ._validation import RequestError
from ._wire import Answer, Wire, answer, bearer, schema_format, sse_event, text_of

__all__ = ["Cohere"]


def _chat_message(m: Mapping[str, Any]) -> dict[str, Any]:
    content = m.get("content")
    if m.get("role") == "tool" and isinstance(content, list):
        content = "".join(
            str(b.get("text") or (b.get("document") or {}).get("data", "")) for b in content
        )
    out = {**m, "content": text_of(content) if isinstance(content, list) else content}
    return {k: v for k, v in out.items() if k != "tool_plan"}


class Cohere(Wire):
    protocol: ClassVar[str] = "cohere"
    what: ClassVar[str] = "Cohere chat"
    paths: ClassVar[tuple[str, ...]] = ("/v2/chat",)

    def authorized(self, headers: Mapping[str, str], query: Mapping[str, str], key: str) -> bool:
        return bearer(headers, key)

    def validate(self, body: Any, params: Mapping[str, str], *, strict: bool) -> None:
        if not isinstance(body, Mapping):
            raise RequestError("invalid request: body must be a JSON object")
        for key in ("model", "messages"):
            if key not in body:
                raise RequestError(f"invalid request: {key} must not be empty")
        if strict:
            for m in body["messages"]:
                if m.get("role") not in ("system", "user", "assistant", "tool"):
                    raise RequestError(f"invalid request: invalid role {m.get('role')!r}")
            _check_response_format(body)

    def to_chat(self, body: Any, params: Mapping[str, str]) -> dict[str, Any]:
        chat: dict[str, Any] = {
            "model": body["model"],
            "messages": [_chat_message(m) for m in body["messages"]],
            "stream": body.get("stream") is True,
        }
        if body.get("tools"):
            chat["tools"] = body["tools"]
        chat.update(self.names.chat_options(body))
        fmt = body.get("response_format")
        if isinstance(fmt, Mapping) and fmt.get("type") == "json_object":
            chat["response_format"] = schema_format(fmt.get("json_schema"))
        return chat

    def body(self, reply: Reply, chat: Mapping[str, Any], ids: Ids) -> Any:
        a = answer(reply, chat, ids)
        message: dict[str, Any] = {"role": "assistant"}
        if a.choice.content:
            message["content"] = [{"type": "text", "text": a.choice.content}]
        if a.choice.tool_calls:
            message["tool_calls"] = _calls(a)
        return {
            "id": ids.response("cohere-fake-"),
            "finish_reason": self.names.finish_reason(a),
            "message": message,
            "usage": _usage(a),
        }

    def frames(
        self, reply: Reply, chat: Mapping[str, Any], ids: Ids, query: Mapping[str, str]
    ) -> Iterator[bytes]:
        a = answer(reply, chat, ids)
        message: dict[str, Any] = {"role": "assistant", "content": [], "tool_plan": ""}
        yield _event("message-start", id=ids.response("cohere-fake-"), delta={"message": message})
        if a.choice.content:
            start = {"message": {"content": {"type": "text", "text": ""}}}
            yield _event("content-start", index=0, delta=start)
            for piece in pieces(a.choice.content):
                delta = {"message": {"content": {"text": piece}}}
                yield _event("content-delta", index=0, delta=delta)
            yield _event("content-end", index=0)
        for i, call in enumerate(_calls(a)):
            arguments = call["function"]["arguments"]
            head: dict[str, Any] = {**call, "function": {"name": call["function"]["name"]}}
            head["function"]["arguments"] = ""
            yield _event("tool-call-start", index=i, delta={"message": {"tool_calls": head}})
            for piece in pieces(arguments, 16):
                more = {"message": {"tool_calls": {"function": {"arguments": piece}}}}
                yield _event("tool-call-delta", index=i, delta=more)
            yield _event("tool-call-end", index=i)
        end = {"finish_reason": self.names.finish_reason(a), "usage": _usage(a)}
        yield _event("message-end", delta=end)

    def error_payload(self, error: ErrorReply, message: str) -> Any:
        return {"id": "cohere-fake-error", "message": message}


def _event(name: str, **fields: Any) -> bytes:
    return sse_event(name, {"type": name, **fields})


def _calls(a: Answer) -> list[dict[str, Any]]:
    return [
        {"id": cid, "type": "function", "function": {"name": tc.name, "arguments": tc.arguments}}
        for tc, cid in zip(a.choice.tool_calls, a.call_ids, strict=True)
    ]


def _usage(a: Answer) -> dict[str, Any]:
    tokens = {"input_tokens": a.prompt_tokens, "output_tokens": a.completion_tokens}
    return {"billed_units": dict(tokens), "tokens": tokens}


def _check_response_format(body: Mapping[str, Any]) -> None:
    fmt = body.get("response_format")
    if fmt is None:
        return
    kind = fmt.get("type") if isinstance(fmt, Mapping) else None
    if kind not in ("text", "json_object"):
        raise RequestError(
            f"invalid request: response_format.type must be 'text' or 'json_object', not {kind!r}"
        )
    if kind == "json_object" and (body.get("tools") or body.get("documents")):
        raise RequestError(
            "invalid request: response_format is not supported with documents or tools"
        )
