"""Chat-completions requests as OpenAI Responses API requests, and Responses back as chat
completions (the shape every layer above the client reads).

The request: a leading system message becomes ``instructions`` (how the Responses API takes a
system prompt); a later system message an input message of role ``developer``; user and
assistant messages input messages (text parts as ``input_text``, images as ``input_image``);
an assistant's tool calls ``function_call`` items and tool results ``function_call_output``
items, matched by ``call_id`` (a result with images as a list of ``input_text`` and
``input_image`` items); the reasoning items a model returned, kept on its assistant
message under :data:`REASONING_KEY`, go back in before that message's own items. Chat options
are renamed (``max_tokens`` and ``max_completion_tokens`` to ``max_output_tokens``,
``response_format`` to ``text.format``, ``reasoning_effort`` to ``reasoning.effort``). The
chat-only parameters parley knows are fitted before this (:mod:`parley.oai._profiles`); any
other parameter the Responses API does not take is sent as it is, so the server's 400 names it.

The answer: ``message`` items' text, ``function_call`` items as tool calls, ``reasoning`` items
kept under :data:`REASONING_KEY` on the message, usage with its cached and reasoning tokens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["REASONING_KEY", "chat_completion", "drop_reasoning", "responses_request"]

REASONING_KEY = "parley_reasoning"
"""The assistant message's key holding the reasoning items its model returned (parley's own:
never sent on the chat-completions path)."""

_PLAIN = frozenset({"user", "assistant"})
_PLAIN_KEYS = frozenset({"role", "content", "name"})  # the API has no place for a name
_RENAMED = {"max_tokens": "max_output_tokens", "max_completion_tokens": "max_output_tokens"}


def drop_reasoning(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``messages`` without :data:`REASONING_KEY` (a message without it is shared, not
    copied)."""
    return [
        {k: v for k, v in m.items() if k != REASONING_KEY} if REASONING_KEY in m else m
        for m in messages
    ]


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, Mapping) and "text" in p
        )
    return str(content)


def _parts(content: Any, role: str) -> Any:
    """A message's content as the Responses API takes it: text as it is, parts renamed."""
    if not isinstance(content, list):
        return _text(content)
    text_type = "output_text" if role == "assistant" else "input_text"
    out: list[dict[str, Any]] = []
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text":
            out.append({"type": text_type, "text": part.get("text", "")})
        elif kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            item: dict[str, Any] = {"type": "input_image", "image_url": url}
            if isinstance(image, Mapping) and image.get("detail"):
                item["detail"] = image["detail"]
            out.append(item)
        else:
            out.append(dict(part) if isinstance(part, Mapping) else part)
    return out


def _output(content: Any) -> Any:
    """A tool result as ``function_call_output.output``: text, or, when it holds images, a
    list of ``input_text`` and ``input_image`` items (the API takes both in a result)."""
    if isinstance(content, list) and any(
        isinstance(p, Mapping) and p.get("type") == "image_url" for p in content
    ):
        return _parts(content, "tool")
    return _text(content)


def _input_items(messages: Sequence[Mapping[str, Any]]) -> tuple[str | None, list[Any]]:
    instructions: list[str] = []
    items: list[Any] = []
    for m in messages:
        role = m.get("role")
        content = m.get("content")
        # Most of a long history: a text message with no calls, reasoning or name to carry.
        if type(content) is str and role in _PLAIN and m.keys() <= _PLAIN_KEYS:
            # Shared, not copied, when it is already an input message: it is only read.
            items.append(m if len(m) == 2 else {"role": role, "content": content})
            continue
        if role == "system" and not items:
            instructions.append(_text(m.get("content")))
            continue
        if role in ("tool", "function"):
            call_id = m.get("tool_call_id") or f"call_{m.get('name', '')}"
            items.append(
                {"type": "function_call_output", "call_id": call_id, "output": _output(content)}
            )
            continue
        if role == "assistant":
            items.extend(dict(r) for r in m.get(REASONING_KEY) or ())
        if content is not None and (content != "" or not m.get("tool_calls")):
            api_role = "developer" if role == "system" else role
            items.append({"role": api_role, "content": _parts(content, str(role))})
        for call in m.get("tool_calls") or ():
            fn = call.get("function") or {}
            items.append(
                {
                    "type": "function_call",
                    "call_id": call.get("id"),
                    "name": fn.get("name"),
                    "arguments": fn.get("arguments") or "{}",
                }
            )
        legacy = m.get("function_call")
        if legacy:
            items.append(
                {
                    "type": "function_call",
                    "call_id": f"call_{legacy.get('name', '')}",
                    "name": legacy.get("name"),
                    "arguments": legacy.get("arguments") or "{}",
                }
            )
    return ("\n\n".join(instructions) if instructions else None), items


def _tool(tool: Mapping[str, Any]) -> Any:
    """A chat ``tools`` entry as a Responses function tool (other tool types as they are)."""
    if tool.get("type") != "function" or not isinstance(tool.get("function"), Mapping):
        return dict(tool)
    fn = tool["function"]
    out: dict[str, Any] = {"type": "function", "name": fn.get("name")}
    if fn.get("description") is not None:
        out["description"] = fn["description"]
    out["parameters"] = fn.get("parameters") or {"type": "object", "properties": {}}
    if "strict" in fn:
        out["strict"] = fn["strict"]
    return out


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        return {"type": "function", "name": choice["function"].get("name")}
    return choice


def _text_format(response_format: Any) -> Any:
    if not isinstance(response_format, Mapping):
        return response_format
    if response_format.get("type") == "json_schema":
        schema = response_format.get("json_schema") or {}
        out = {"type": "json_schema", **{k: v for k, v in schema.items() if k != "type"}}
        return out
    return dict(response_format)


def responses_request(params: Mapping[str, Any]) -> dict[str, Any]:
    """The Responses API body for chat-completions ``params`` (request options such as
    ``timeout`` and ``extra_headers`` are left as they are)."""
    body: dict[str, Any] = {}
    for key, value in params.items():
        if key == "messages":
            instructions, items = _input_items(value)
            if instructions is not None:
                body["instructions"] = instructions
            body["input"] = items
        elif key == "functions":  # the legacy form of tools
            body.setdefault("tools", []).extend(
                _tool({"type": "function", "function": f}) for f in value or ()
            )
        elif key == "tools":
            body.setdefault("tools", []).extend(_tool(t) for t in value or ())
        elif key == "tool_choice":
            body["tool_choice"] = _tool_choice(value)
        elif key in _RENAMED:
            body[_RENAMED[key]] = value
        elif key == "response_format":
            body.setdefault("text", {})["format"] = _text_format(value)
        elif key == "reasoning_effort":
            body.setdefault("reasoning", {})["effort"] = value
        elif key == "stream_options":
            # Chat's include_usage has no meaning here: a Responses stream always ends with it.
            rest = {k: v for k, v in (value or {}).items() if k != "include_usage"}
            if rest:
                body["stream_options"] = rest
        elif key == "n" and value == 1:
            continue
        else:
            body[key] = value
    if not body.get("tools"):
        body.pop("tools", None)
    return body


def _finish_reason(response: Any, has_calls: bool) -> str:
    if has_calls:
        return "tool_calls"
    details = getattr(response, "incomplete_details", None)
    reason = getattr(details, "reason", None)
    if reason == "max_output_tokens":
        return "length"
    if reason == "content_filter":
        return "content_filter"
    return "stop"


def _usage(usage: Any) -> dict[str, Any]:
    if usage is None:
        return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    cached = getattr(getattr(usage, "input_tokens_details", None), "cached_tokens", 0) or 0
    reasoning = getattr(getattr(usage, "output_tokens_details", None), "reasoning_tokens", 0) or 0
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def chat_completion(response: Any) -> Any:
    """The ``openai`` ``ChatCompletion`` of a Responses API ``Response``: one choice."""
    from openai.types.chat import ChatCompletion

    texts: list[str] = []
    refusals: list[str] = []
    calls: list[dict[str, Any]] = []
    reasoning: list[dict[str, Any]] = []
    for item in response.output or ():
        kind = getattr(item, "type", None)
        if kind == "message":
            for part in item.content or ():
                if part.type == "output_text":
                    texts.append(part.text)
                elif part.type == "refusal":
                    refusals.append(part.refusal)
        elif kind == "function_call":
            function = {"name": item.name, "arguments": item.arguments}
            calls.append({"id": item.call_id, "type": "function", "function": function})
        elif kind == "reasoning":
            reasoning.append(item.model_dump(exclude_none=True, mode="json"))
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(texts) if texts or not (calls or refusals) else None,
    }
    if refusals:
        message["refusal"] = "".join(refusals)
    if calls:
        message["tool_calls"] = calls
    if reasoning:
        message[REASONING_KEY] = reasoning
    return ChatCompletion.model_validate(
        {
            "id": response.id,
            "object": "chat.completion",
            "created": int(response.created_at),
            "model": response.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": _finish_reason(response, bool(calls)),
                    "logprobs": None,
                }
            ],
            "usage": _usage(response.usage),
        }
    )
