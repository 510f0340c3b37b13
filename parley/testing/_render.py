"""Turn a scripted :class:`Reply` into the JSON bodies and SSE events OpenAI's chat API sends,
and the pieces both completion endpoints share (ids, usage, stream pieces, SSE, error bodies)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ._script import Choice, ErrorReply, Reply

__all__ = [
    "Frame",
    "Ids",
    "approx_tokens",
    "chat_prompt_tokens",
    "completion_body",
    "error_body",
    "frame_for",
    "include_usage",
    "pieces",
    "stream_events",
    "usage_for",
]

_WORDS = re.compile(r"\S+\s*|\s+")
_ARG_PIECE = 16  # characters of tool-call arguments per streamed chunk

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    408: ("timeout", None),
    409: ("conflict_error", None),
    422: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
}


class Ids:
    """Thread-safe id source: each server numbers its completions and tool calls from 1."""

    def __init__(self) -> None:
        self._completions = itertools.count(1)
        self._calls = itertools.count(1)
        self._requests = itertools.count(1)

    def completion(self) -> str:
        return f"chatcmpl-fake-{next(self._completions)}"

    def text_completion(self) -> str:
        return f"cmpl-fake-{next(self._completions)}"

    def response(self, prefix: str) -> str:
        """A response id in a provider's style, e.g. ``msg_fake_3``."""
        return f"{prefix}{next(self._completions)}"

    def call(self) -> str:
        return f"call_fake_{next(self._calls)}"

    def request(self) -> str:
        return f"req_fake_{next(self._requests)}"


def approx_tokens(text: str) -> int:
    """A deterministic stand-in for a tokenizer: about four characters a token."""
    return (len(text) + 3) // 4


def _message_text(message: Any) -> str:
    if not isinstance(message, Mapping):
        return ""
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    parts = [content if isinstance(content, str) else "", str(message.get("name") or "")]
    for tc in message.get("tool_calls") or ():
        fn = tc.get("function", {}) if isinstance(tc, Mapping) else {}
        parts.append(f"{fn.get('name', '')}{fn.get('arguments', '')}")
    return " ".join(parts)


def _choice_text(choice: Choice) -> str:
    parts = [choice.content or ""]
    parts += [tc.name + tc.arguments for tc in choice.tool_calls]
    if choice.function_call is not None:
        parts.append(choice.function_call.name + choice.function_call.arguments)
    return "".join(parts)


def chat_prompt_tokens(request: Mapping[str, Any]) -> int:
    """The approximate prompt tokens of a chat request: its messages, with per-message overhead."""
    messages = request.get("messages") or []
    return 3 + sum(4 + approx_tokens(_message_text(m)) for m in messages)


def usage_for(reply: Reply, prompt: int, choices: Iterable[Choice]) -> dict[str, Any]:
    """Usage numbers: the reply's own where given, else ``prompt`` (the request's approximate
    prompt tokens) and approximations from the choices' texts. A scripted ``cached_tokens`` or
    ``reasoning_tokens`` is reported where OpenAI reports it (``prompt_tokens_details``,
    ``completion_tokens_details``), as are those detail objects when scripted whole; both are
    parts of the prompt and completion counts, as in OpenAI's usage."""
    completion = sum(approx_tokens(_choice_text(c)) for c in choices)
    given = dict(reply.usage or {})
    prompt = int(given.get("prompt_tokens", prompt))
    completion = int(given.get("completion_tokens", completion))
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion}
    usage["total_tokens"] = int(given.get("total_tokens", prompt + completion))
    for details, flat in (
        ("prompt_tokens_details", "cached_tokens"),
        ("completion_tokens_details", "reasoning_tokens"),
    ):
        shown = dict(given.get(details) or {})
        if flat in given:
            shown[flat] = int(given[flat])
        if shown:
            usage[details] = shown
    return usage


@dataclass(frozen=True)
class Frame:
    """What every body or chunk of one completion shares."""

    id: str
    created: int
    model: str

    def head(self, obj: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": obj,
            "created": self.created,
            "model": self.model,
            "system_fingerprint": "fp_parley_fake",
        }


def effective_choices(reply: Reply, request: Mapping[str, Any]) -> tuple[Choice, ...]:
    """The choices sent: a single scripted choice repeated for ``n`` > 1, as a real server
    answers with n choices; each text cut before the first of the request's ``stop``
    sequences, where a real model stops generating."""
    n = request.get("n")
    choices = reply.choices
    if isinstance(n, int) and n > 1 and len(choices) == 1:
        choices = choices * n
    stops = stop_sequences(request)
    if not stops:
        return choices
    return tuple(
        dataclasses.replace(c, content=cut_at_stop(c.content, stops)) if c.content else c
        for c in choices
    )


def stop_sequences(request: Mapping[str, Any]) -> tuple[str, ...]:
    """The request's ``stop`` as a tuple of non-empty strings."""
    stop = request.get("stop")
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, list):
        return ()
    return tuple(s for s in stop if isinstance(s, str) and s)


def cut_at_stop(text: str, stops: Iterable[str]) -> str:
    """``text`` up to (not including) the earliest of ``stops``."""
    end = min((i for i in (text.find(s) for s in stops) if i >= 0), default=len(text))
    return text[:end]


def frame_for(reply: Reply, request: Mapping[str, Any], completion_id: str) -> Frame:
    """The id, time and model of one completion: the reply's model, else the request's."""
    model = reply.model or request.get("model")
    return Frame(completion_id, int(time.time()), model if isinstance(model, str) else "fake-model")


def include_usage(request: Mapping[str, Any]) -> bool:
    """Whether a streamed answer ends with a usage chunk (``stream_options.include_usage``)."""
    options = request.get("stream_options")
    return isinstance(options, Mapping) and options.get("include_usage") is True


def _call_ids(choices: tuple[Choice, ...], ids: Ids) -> list[list[str]]:
    return [[tc.id or ids.call() for tc in c.tool_calls] for c in choices]


def completion_body(reply: Reply, request: Mapping[str, Any], ids: Ids) -> dict[str, Any]:
    """The JSON body of a non-streamed chat completion."""
    choices = effective_choices(reply, request)
    frame = frame_for(reply, request, ids.completion())
    out = []
    for index, (choice, call_ids) in enumerate(zip(choices, _call_ids(choices, ids), strict=True)):
        message: dict[str, Any] = {
            "role": "assistant",
            "content": choice.content,
            "refusal": choice.refusal,
        }
        if choice.tool_calls:
            message["tool_calls"] = [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": tc.name, "arguments": tc.arguments},
                }
                for tc, cid in zip(choice.tool_calls, call_ids, strict=True)
            ]
        if choice.function_call is not None:
            message["function_call"] = {
                "name": choice.function_call.name,
                "arguments": choice.function_call.arguments,
            }
        out.append(
            {
                "index": index,
                "message": message,
                "finish_reason": choice.effective_finish_reason,
                "logprobs": None,
            }
        )
    body = frame.head("chat.completion")
    body["choices"] = out
    body["usage"] = usage_for(reply, chat_prompt_tokens(request), choices)
    return body


def pieces(text: str, size: int | None = None) -> list[str]:
    """``text`` cut for streaming: word by word (a word with the spaces after it), or in
    pieces of ``size`` characters."""
    if not text:
        return []
    if size is None:
        return _WORDS.findall(text)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _choice_deltas(choice: Choice, call_ids: list[str]) -> Iterator[dict[str, Any]]:
    yield {"role": "assistant", "content": "" if choice.content is not None else None}
    for piece in pieces(choice.content or ""):
        yield {"content": piece}
    for i, (tc, cid) in enumerate(zip(choice.tool_calls, call_ids, strict=True)):
        head = {
            "index": i,
            "id": cid,
            "type": "function",
            "function": {"name": tc.name, "arguments": ""},
        }
        yield {"tool_calls": [head]}
        for piece in pieces(tc.arguments, _ARG_PIECE):
            yield {"tool_calls": [{"index": i, "function": {"arguments": piece}}]}
    if choice.function_call is not None:
        yield {"function_call": {"name": choice.function_call.name, "arguments": ""}}
        for piece in pieces(choice.function_call.arguments, _ARG_PIECE):
            yield {"function_call": {"arguments": piece}}


def stream_events(reply: Reply, request: Mapping[str, Any], ids: Ids) -> list[dict[str, Any]]:
    """The SSE ``data:`` payloads of a streamed chat completion, without the final ``[DONE]``.

    Choices are streamed one after the other; each ends with a chunk carrying its
    ``finish_reason``. A usage chunk (empty ``choices``) follows when the request asked for it
    with ``stream_options: {"include_usage": true}``, as OpenAI does.
    """
    choices = effective_choices(reply, request)
    frame = frame_for(reply, request, ids.completion())
    with_usage = include_usage(request)
    events = []

    def chunk(choice_list: list[dict[str, Any]]) -> dict[str, Any]:
        c = frame.head("chat.completion.chunk")
        c["choices"] = choice_list
        if with_usage:
            c["usage"] = None
        return c

    for index, (choice, call_ids) in enumerate(zip(choices, _call_ids(choices, ids), strict=True)):
        for delta in _choice_deltas(choice, call_ids):
            events.append(
                chunk([{"index": index, "delta": delta, "finish_reason": None, "logprobs": None}])
            )
        end = {
            "index": index,
            "delta": {},
            "finish_reason": choice.effective_finish_reason,
            "logprobs": None,
        }
        events.append(chunk([end]))
    if with_usage:
        last = chunk([])
        last["usage"] = usage_for(reply, chat_prompt_tokens(request), choices)
        events.append(last)
    return events


def sse(event: Mapping[str, Any] | str) -> bytes:
    data = event if isinstance(event, str) else json.dumps(event, separators=(",", ":"))
    return f"data: {data}\n\n".encode()


def error_body(error: ErrorReply) -> bytes:
    """The body of an error reply: verbatim if given, else OpenAI's ``{"error": {...}}`` shape."""
    if error.body is not None:
        return error.body.encode()
    default_type, default_code = _ERROR_TYPES.get(
        error.status, ("server_error" if error.status >= 500 else "invalid_request_error", None)
    )
    payload = {
        "error": {
            "message": error.message or f"Fake LLM server error {error.status}",
            "type": error.type or default_type,
            "param": error.param,
            "code": error.code or default_code,
        }
    }
    return json.dumps(payload).encode()
