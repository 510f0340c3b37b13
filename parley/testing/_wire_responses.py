"""OpenAI's Responses API (``POST /v1/responses``) as a wire: ``instructions`` and ``input``
items read as chat messages for the script, the answer as a ``response`` object (``message``
and ``function_call`` output items, usage with its token details), a stream as the API's
named SSE events (``response.created``, ``response.output_text.delta``, ...,
``response.completed``), errors in OpenAI's ``{"error": {...}}`` shape.

Strict checks answer what the API refuses with its 400s: an unknown parameter, an input item
of an unknown type or role, a ``function_call_output`` whose ``call_id`` no earlier
``function_call`` of the input made, a chat-shaped tool (``{"function": {...}}``), what the
model's profile refuses (``temperature`` for a reasoning model, a ``reasoning.effort`` it does
not take, ``include: ["reasoning.encrypted_content"]`` for a model that does not reason:
:mod:`parley.testing._model_rules`), and (a 404) a reasoning item sent back without its
``encrypted_content`` in a request with ``store: false``, which the API cannot look up.

A scripted reply's ``usage`` may give ``prompt_tokens_details.cached_tokens`` and
``completion_tokens_details.reasoning_tokens``; a reply with reasoning tokens also returns a
``reasoning`` output item first, as reasoning models do, with ``encrypted_content`` when the
request's ``include`` asks for it. A streamed function call comes as the API sends it: the item
added with empty arguments, ``response.function_call_arguments.delta`` pieces, then ``.done``.
Azure OpenAI's Responses paths (``/openai/v1/responses``, and ``/openai/responses`` with an
``api-version``) are answered too.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from ._model_rules import check_responses_rules
from ._render import Ids, error_body, pieces
from ._script import ErrorReply, Reply
from ._validation import RequestError
from ._wire import Answer, Wire, answer, sse_event

__all__ = ["OpenAIResponses"]

# The body parameters of POST /v1/responses.
_PARAMETERS = frozenset(
    {
        "background",
        "conversation",
        "include",
        "input",
        "instructions",
        "max_output_tokens",
        "max_tool_calls",
        "metadata",
        "model",
        "parallel_tool_calls",
        "previous_response_id",
        "prompt",
        "prompt_cache_key",
        "prompt_cache_retention",
        "reasoning",
        "safety_identifier",
        "service_tier",
        "store",
        "stream",
        "stream_options",
        "temperature",
        "text",
        "tool_choice",
        "tools",
        "top_logprobs",
        "top_p",
        "truncation",
        "user",
    }
)
_ITEM_TYPES = frozenset({"message", "function_call", "function_call_output", "reasoning"})
_ROLES = frozenset({"user", "assistant", "system", "developer"})
_PART_TYPES = frozenset({"input_text", "input_image", "input_file", "output_text", "refusal"})
_ENCRYPTED = "reasoning.encrypted_content"


def _invalid(message: str, param: str, code: str = "invalid_value") -> RequestError:
    return RequestError(message, param, code)


def _check_content(content: Any, where: str) -> None:
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise _invalid(f"Invalid type for '{where}': expected a string or an array.", where)
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind not in _PART_TYPES:
            raise _invalid(
                f"Invalid value: {kind!r}. Supported values are: "
                + ", ".join(repr(t) for t in sorted(_PART_TYPES))
                + ".",
                f"{where}[{j}].type",
            )


def _unstored(item: Mapping[str, Any]) -> RequestError:
    return RequestError(
        f"Item with id '{item.get('id')}' not found. Items are not persisted when `store` is "
        "set to false. Try again with `store` set to true, or remove this item from your input.",
        "input",
        status=404,
    )


def _check_input(items: Any, stored: bool) -> None:
    if isinstance(items, str):
        return
    if not isinstance(items, list):
        raise _invalid("Invalid type for 'input': expected a string or an array.", "input")
    calls: set[Any] = set()
    for i, item in enumerate(items):
        where = f"input[{i}]"
        if not isinstance(item, Mapping):
            raise _invalid(f"Invalid type for '{where}': expected an object.", where)
        kind = item.get("type", "message")
        if kind not in _ITEM_TYPES:
            raise _invalid(f"Invalid value: {kind!r} for '{where}.type'.", f"{where}.type")
        if kind == "message":
            if item.get("role") not in _ROLES:
                raise _invalid(
                    f"Invalid value: {item.get('role')!r}. Supported values are: 'assistant', "
                    "'system', 'developer' and 'user'.",
                    f"{where}.role",
                )
            _check_content(item.get("content"), f"{where}.content")
        elif kind == "function_call":
            for key in ("call_id", "name", "arguments"):
                if not isinstance(item.get(key), str):
                    raise _invalid(
                        f"Missing required parameter: '{where}.{key}'.",
                        f"{where}.{key}",
                        "missing_required_parameter",
                    )
            calls.add(item["call_id"])
        elif kind == "reasoning" and not stored and not item.get("encrypted_content"):
            raise _unstored(item)
        elif kind == "function_call_output":
            if not isinstance(item.get("output"), (str, list)):
                raise _invalid(
                    f"Missing required parameter: '{where}.output'.",
                    f"{where}.output",
                    "missing_required_parameter",
                )
            _check_output(item["output"], f"{where}.output")
            if item.get("call_id") not in calls:
                raise _invalid(
                    "No tool call found for function call output with call_id "
                    f"{item.get('call_id')}.",
                    "input",
                )


_OUTPUT_TYPES = ("input_text", "input_image", "input_file")


def _check_output(output: Any, where: str) -> None:
    """A function call output's items: text, images and files only."""
    for k, part in enumerate(output if isinstance(output, list) else ()):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind not in _OUTPUT_TYPES:
            raise _invalid(
                f"Invalid value: {kind!r}. Supported values are: 'input_text', 'input_image' "
                "and 'input_file'.",
                f"{where}[{k}].type",
            )
        if kind == "input_image" and not isinstance(
            part.get("image_url") or part.get("file_id"), str
        ):
            raise _invalid(
                f"Missing required parameter: '{where}[{k}].image_url'.",
                f"{where}[{k}].image_url",
                "missing_required_parameter",
            )


def _check_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise _invalid("Invalid type for 'tools': expected an array.", "tools")
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise _invalid(f"Invalid type for 'tools[{i}]': expected an object.", f"tools[{i}]")
        if tool.get("type") == "function" and not isinstance(tool.get("name"), str):
            raise _invalid(
                f"Missing required parameter: 'tools[{i}].name'.",
                f"tools[{i}].name",
                "missing_required_parameter",
            )


def _text(content: Any) -> Any:
    if isinstance(content, str) or not isinstance(content, list):
        return content
    parts: list[dict[str, Any]] = []
    for p in content:
        if p.get("type") in ("input_text", "output_text"):
            parts.append({"type": "text", "text": p.get("text", "")})
        elif p.get("type") == "input_image":
            parts.append({"type": "image_url", "image_url": {"url": p.get("image_url")}})
    if all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def _chat_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``instructions`` and ``input`` as chat messages: a function call joins the
    assistant message before it, a function call output is a ``tool`` message."""
    out: list[dict[str, Any]] = []
    if body.get("instructions"):
        out.append({"role": "system", "content": body["instructions"]})
    items = body.get("input")
    if isinstance(items, str):
        return [*out, {"role": "user", "content": items}]
    images: list[dict[str, Any]] = []  # of the current function call outputs
    for item in items or ():
        kind = item.get("type", "message")
        if images and kind != "function_call_output":
            out.append({"role": "user", "content": images})
            images = []
        if kind == "message":
            role = "system" if item["role"] == "developer" else item["role"]
            out.append({"role": role, "content": _text(item.get("content"))})
        elif kind == "function_call":
            call = {
                "id": item["call_id"],
                "type": "function",
                "function": {"name": item["name"], "arguments": item["arguments"]},
            }
            last = out[-1] if out else None
            if last is None or last["role"] != "assistant":
                last = {"role": "assistant", "content": None}
                out.append(last)
            last.setdefault("tool_calls", []).append(call)
        elif kind == "function_call_output":
            # Text, or items: their text, and their images (as OpenAI's chat carries them) in
            # a user message after the outputs.
            content = _text(item["output"])
            if isinstance(content, list):
                images += [p for p in content if p["type"] == "image_url"]
                content = "".join(p["text"] for p in content if p["type"] == "text")
            out.append({"role": "tool", "tool_call_id": item["call_id"], "content": content})
    if images:
        out.append({"role": "user", "content": images})
    return out


def _chat_tools(tools: Any) -> list[dict[str, Any]]:
    out = []
    for t in tools or ():
        if t.get("type") == "function":
            spec = {k: t[k] for k in ("name", "description", "parameters", "strict") if k in t}
            out.append({"type": "function", "function": spec})
    return out


class OpenAIResponses(Wire):
    what: ClassVar[str] = "Responses API"
    paths: ClassVar[tuple[str, ...]] = (
        "/v1/responses",
        "/responses",
        "/openai/v1/responses",  # Azure OpenAI's v1 API
        "/openai/responses",  # Azure OpenAI's dated API (?api-version=...)
    )

    def validate(self, body: Any, params: Mapping[str, str], *, strict: bool) -> None:
        if not isinstance(body, Mapping):
            raise RequestError("The request body must be a JSON object.", None, "invalid_type")
        if not body.get("model"):
            raise RequestError(
                "Missing required parameter: 'model'.", "model", "missing_required_parameter"
            )
        if not strict:
            return
        for key in body:
            if key not in _PARAMETERS:
                raise RequestError(f"Unknown parameter: '{key}'.", key, "unknown_parameter")
        _check_input(body.get("input"), stored=body.get("store") is not False)
        _check_tools(body.get("tools"))
        check_responses_rules(body)

    def to_chat(self, body: Any, params: Mapping[str, str]) -> dict[str, Any]:
        chat: dict[str, Any] = {"model": body.get("model"), "messages": _chat_messages(body)}
        tools = _chat_tools(body.get("tools"))
        if tools:
            chat["tools"] = tools
        for ours, theirs in (
            ("max_tokens", "max_output_tokens"),
            ("temperature", "temperature"),
            ("top_p", "top_p"),
            ("tool_choice", "tool_choice"),
            ("stream", "stream"),
            ("include", "include"),  # kept for the answer: encrypted reasoning or not
        ):
            if theirs in body:
                chat[ours] = body[theirs]
        return chat

    def body(self, reply: Reply, chat: Mapping[str, Any], ids: Ids) -> Any:
        a = answer(reply, chat, ids)
        return _response(a, reply, chat, ids.response("resp_fake_"), "completed")

    def frames(
        self, reply: Reply, chat: Mapping[str, Any], ids: Ids, query: Mapping[str, str]
    ) -> Iterator[bytes]:
        a = answer(reply, chat, ids)
        done = _response(a, reply, chat, ids.response("resp_fake_"), "completed")
        started = {**done, "status": "in_progress", "output": [], "usage": None}
        n = 0

        def event(name: str, **payload: Any) -> bytes:
            nonlocal n
            n += 1
            return sse_event(name, {"type": name, "sequence_number": n, **payload})

        yield event("response.created", response=started)
        for index, item in enumerate(done["output"]):
            if item["type"] == "message":
                opened = {**item, "status": "in_progress", "content": []}
                yield event("response.output_item.added", output_index=index, item=opened)
                text = item["content"][0]["text"]
                where = {"item_id": item["id"], "output_index": index, "content_index": 0}
                for piece in pieces(text):
                    yield event("response.output_text.delta", **where, delta=piece, logprobs=[])
                yield event("response.output_text.done", **where, text=text, logprobs=[])
            elif item["type"] == "function_call":
                opened = {**item, "status": "in_progress", "arguments": ""}
                yield event("response.output_item.added", output_index=index, item=opened)
                where = {"item_id": item["id"], "output_index": index}
                for piece in pieces(item["arguments"], 8):
                    yield event("response.function_call_arguments.delta", **where, delta=piece)
                yield event(
                    "response.function_call_arguments.done", **where, arguments=item["arguments"]
                )
            else:
                yield event("response.output_item.added", output_index=index, item=item)
            yield event("response.output_item.done", output_index=index, item=item)
        yield event("response.completed", response=done)

    def error(self, error: ErrorReply) -> tuple[dict[str, str], bytes]:
        return {"Content-Type": "application/json"}, error_body(error)


def _details(reply: Reply, key: str, field: str) -> int:
    given = (reply.usage or {}).get(key) or {}
    return int(given.get(field, 0)) if isinstance(given, Mapping) else 0


def _response(
    a: Answer, reply: Reply, chat: Mapping[str, Any], response_id: str, status: str
) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    reasoning = _details(reply, "completion_tokens_details", "reasoning_tokens")
    if reasoning:
        item: dict[str, Any] = {"type": "reasoning", "id": f"rs_{response_id}", "summary": []}
        include = chat.get("include")
        if isinstance(include, list) and _ENCRYPTED in include:
            item["encrypted_content"] = f"fake-reasoning-of-{response_id}"
        output.append(item)
    if a.choice.content or not a.choice.tool_calls:
        output.append(
            {
                "type": "message",
                "id": f"msg_{response_id}",
                "status": "completed",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": a.choice.content or "", "annotations": []}
                ],
            }
        )
    for tc, call_id in zip(a.choice.tool_calls, a.call_ids, strict=True):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{call_id}",
                "call_id": call_id,
                "name": tc.name,
                "arguments": tc.arguments,
                "status": "completed",
            }
        )
    incomplete = a.choice.effective_finish_reason == "length"
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if incomplete else status,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "error": None,
        "model": a.model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": a.prompt_tokens,
            "input_tokens_details": {
                "cached_tokens": _details(reply, "prompt_tokens_details", "cached_tokens")
            },
            "output_tokens": a.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": a.prompt_tokens + a.completion_tokens,
        },
    }
