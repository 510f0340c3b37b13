"""Reject chat-completion requests the way OpenAI's API does, with its error wording.

The basic checks (a JSON object with ``model`` and ``messages``) always run. The strict
checks catch what a real API rejects but a lenient fake would let through, so a test fails on
the fake exactly where production would fail: message ``name`` fields OpenAI refuses
(AutoGen #941), tool results separated from their tool call (AutoGen #3164), bad tool names.
:func:`check_context_window` refuses a prompt longer than a model's context window.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["RequestError", "check_context_window", "validate_chat_request"]

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
TOOL_NAME_PATTERN = r"^[a-zA-Z0-9_-]+$"
_NAME = re.compile(NAME_PATTERN)
_TOOL_NAME = re.compile(TOOL_NAME_PATTERN)
_CONTENT_PART_TYPES = ("text", "image_url", "input_audio", "file", "refusal")


class RequestError(Exception):
    """A 400 answer: OpenAI's message, and the offending parameter."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code


def validate_chat_request(body: Any, *, strict: bool = True) -> None:
    """Raise :class:`RequestError` if OpenAI's API would answer ``body`` with a 400."""
    if not isinstance(body, Mapping):
        raise RequestError("The request body must be a JSON object.", None, "invalid_type")
    model = body.get("model")
    if model is None:
        raise RequestError(
            "you must provide a model parameter", "model", "missing_required_parameter"
        )
    if not isinstance(model, str) or not model:
        raise RequestError(
            f"Invalid type for 'model': expected a non-empty string, got {model!r}.", "model"
        )
    if "messages" not in body:
        raise RequestError(
            "Missing required parameter: 'messages'.", "messages", "missing_required_parameter"
        )
    messages = body["messages"]
    if not isinstance(messages, list):
        raise RequestError(
            "Invalid type for 'messages': expected an array.", "messages", "invalid_type"
        )
    if not messages:
        raise RequestError(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.",
            "messages",
            "empty_array",
        )
    if strict:
        _check_messages(messages)
        _check_tools(body)
        _check_options(body)


def check_context_window(body: Mapping[str, Any], window: int) -> None:
    """Refuse, as OpenAI does, a request whose messages count more than ``window`` tokens
    (counted with :func:`parley.token_count_utils.count_token` for the request's model, or as
    ``gpt-4-0613`` when that model's chat format is unknown, such as ``fake-model``)."""
    from ..token_count_utils import count_token

    messages = body["messages"]
    try:
        tokens = count_token(messages, model=body["model"])
    except NotImplementedError:
        tokens = count_token(messages, model="gpt-4-0613")
    if tokens > window:
        raise RequestError(
            f"This model's maximum context length is {window} tokens. However, your messages "
            f"resulted in {tokens} tokens. Please reduce the length of the messages.",
            "messages",
            "context_length_exceeded",
        )


def _check_messages(messages: list[Any]) -> None:
    pending: list[str] = []  # tool_call ids still waiting for their tool message
    pending_since = 0
    for i, m in enumerate(messages):
        where = f"messages.[{i}]"
        if not isinstance(m, Mapping):
            raise RequestError(
                f"Invalid type for '{where}': expected an object.", where, "invalid_type"
            )
        role = m.get("role")
        if role not in ROLES:
            supported = ", ".join(f"'{r}'" for r in ROLES)
            raise RequestError(
                f"Invalid value: {role!r}. Supported values are: {supported}.",
                f"{where}.role",
                "invalid_value",
            )
        if pending and role != "tool":
            raise _unanswered(pending, pending_since)
        name = m.get("name")
        if name is not None and (not isinstance(name, str) or not _NAME.match(name)):
            raise RequestError(
                f"{name!r} does not match {NAME_PATTERN!r} - '{where}.name'", f"{where}.name"
            )
        _check_content(m, role, where)
        if role == "tool":
            call_id = m.get("tool_call_id")
            if not isinstance(call_id, str):
                raise RequestError(
                    f"Missing required parameter: '{where}.tool_call_id'.",
                    f"{where}.tool_call_id",
                    "missing_required_parameter",
                )
            if call_id not in pending:
                raise RequestError(
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    f"{where}.role",
                )
            pending.remove(call_id)
        elif role == "assistant" and m.get("tool_calls"):
            pending = _tool_call_ids(m["tool_calls"], where)
            pending_since = i
    if pending:
        raise _unanswered(pending, pending_since)


def _unanswered(pending: list[str], since: int) -> RequestError:
    return RequestError(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(pending),
        f"messages.[{since}].role",
    )


def _tool_call_ids(tool_calls: Any, where: str) -> list[str]:
    if not isinstance(tool_calls, list):
        raise RequestError(
            f"Invalid type for '{where}.tool_calls': expected an array.", f"{where}.tool_calls"
        )
    ids = []
    for j, tc in enumerate(tool_calls):
        here = f"{where}.tool_calls.[{j}]"
        fn = tc.get("function") if isinstance(tc, Mapping) else None
        if (
            not isinstance(tc, Mapping)
            or not isinstance(tc.get("id"), str)
            or not isinstance(fn, Mapping)
        ):
            raise RequestError(
                f"Invalid value for '{here}': expected {{id, type, function}}.", here
            )
        if not isinstance(fn.get("name"), str) or not isinstance(fn.get("arguments"), str):
            raise RequestError(
                f"Invalid value for '{here}.function': 'name' and 'arguments' must be strings.",
                f"{here}.function",
            )
        ids.append(tc["id"])
    return ids


def _check_content(m: Mapping[str, Any], role: str, where: str) -> None:
    content = m.get("content")
    may_be_empty = role == "assistant" and (m.get("tool_calls") or m.get("function_call"))
    if content is None:
        if may_be_empty or (role == "assistant" and "content" in m and m.get("refusal")):
            return
        raise RequestError(
            "Invalid value for 'content': expected a string, got null.",
            f"{where}.content",
            "invalid_type",
        )
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise RequestError(
            f"Invalid type for '{where}.content': expected one of a string or array of objects, "
            f"but got {type(content).__name__} instead.",
            f"{where}.content",
            "invalid_type",
        )
    for k, part in enumerate(content):
        here = f"{where}.content.[{k}]"
        if not isinstance(part, Mapping) or part.get("type") not in _CONTENT_PART_TYPES:
            raise RequestError(
                f"Invalid value for '{here}.type': {part!r}.", f"{here}.type", "invalid_value"
            )
        if part["type"] == "text" and not isinstance(part.get("text"), str):
            raise RequestError(f"Missing required parameter: '{here}.text'.", f"{here}.text")


def _check_tools(body: Mapping[str, Any]) -> None:
    for key in ("tools", "functions"):
        specs = body.get(key)
        if specs is None:
            continue
        if not isinstance(specs, list):
            raise RequestError(f"Invalid type for '{key}': expected an array.", key, "invalid_type")
        for j, spec in enumerate(specs):
            fn = spec.get("function") if key == "tools" and isinstance(spec, Mapping) else spec
            here = f"{key}[{j}].function" if key == "tools" else f"{key}[{j}]"
            if not isinstance(fn, Mapping):
                raise RequestError(f"Invalid value for '{here}': expected an object.", here)
            name = fn.get("name")
            if not isinstance(name, str) or not _TOOL_NAME.match(name) or len(name) > 64:
                raise RequestError(
                    f"Invalid '{here}.name': string does not match pattern. Expected a string that "
                    f"matches the pattern '{TOOL_NAME_PATTERN}'.",
                    f"{here}.name",
                    "invalid_value",
                )
            params = fn.get("parameters")
            if params is not None and not isinstance(params, Mapping):
                raise RequestError(
                    f"Invalid type for '{here}.parameters': expected an object.", here
                )


def _check_options(body: Mapping[str, Any]) -> None:
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise RequestError(
            "Invalid type for 'stream': expected a boolean.", "stream", "invalid_type"
        )
    n = body.get("n")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 128):
        raise RequestError(f"Invalid 'n': expected an integer from 1 to 128, got {n!r}.", "n")
    for key, high in (("temperature", 2), ("top_p", 1)):
        v = body.get(key)
        if v is not None and (
            isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= high
        ):
            raise RequestError(
                f"Invalid '{key}': expected a number from 0 to {high}, got {v!r}.",
                key,
                "invalid_value",
            )
