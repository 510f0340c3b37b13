"""Reject completion requests (chat and legacy text) the way OpenAI's API does, with its wording.

The basic checks (a JSON object with ``model`` and ``messages``, or ``prompt`` for a text
completion) always run. The strict
checks catch what a real API rejects but a lenient fake would let through, so a test fails on
the fake exactly where production would fail: message ``name`` fields OpenAI refuses
(AutoGen #941), tool results separated from their tool call (AutoGen #3164), bad tool names,
image parts OpenAI refuses (outside a user message, a url that is neither http(s) nor an
image's base64 data URI).
:func:`check_context_window` refuses a prompt longer than a model's context window.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._image_parts import image_part_problem

__all__ = [
    "RequestError",
    "check_context_window",
    "prompt_texts",
    "validate_chat_request",
    "validate_completion_request",
]

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
TOOL_NAME_PATTERN = r"^[a-zA-Z0-9_-]+$"
_NAME = re.compile(NAME_PATTERN)
_TOOL_NAME = re.compile(TOOL_NAME_PATTERN)
_CONTENT_PART_TYPES = ("text", "image_url", "input_audio", "file", "refusal")


class RequestError(Exception):
    """A 400 answer (or the ``status`` the API gives that refusal): the API's message, the
    offending parameter, and (for a provider whose errors carry one) the error's type."""

    def __init__(
        self,
        message: str,
        param: str | None = None,
        code: str | None = None,
        type: str | None = None,  # the error field is called "type"
        status: int = 400,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code
        self.type = type
        self.status = status


def validate_chat_request(body: Any, *, strict: bool = True) -> None:
    """Raise :class:`RequestError` if OpenAI's API would answer ``body`` with a 400."""
    _check_model(body)
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


def validate_completion_request(body: Any, *, strict: bool = True) -> None:
    """Raise :class:`RequestError` if OpenAI's API would answer the legacy text-completion
    request ``body`` (``POST /v1/completions``) with a 400."""
    _check_model(body)
    if "prompt" not in body:
        raise RequestError(
            "Missing required parameter: 'prompt'.", "prompt", "missing_required_parameter"
        )
    if strict:
        _check_prompt(body["prompt"])
        _check_options(body)
        _check_completion_options(body)


def prompt_texts(prompt: Any) -> list[str | list[int]]:
    """The prompts of a text-completion request, one per batch entry: a string, or a list of
    token ids. OpenAI's forms: a str, a list of str, a list of ints (one tokenised prompt), a
    list of lists of ints. ``null`` is the empty document. Lenient with anything else (a
    non-strict server lets it through), which becomes one prompt of its JSON text."""
    if prompt is None:
        return [""]
    if isinstance(prompt, str) or _is_tokens(prompt):
        return [prompt]
    if isinstance(prompt, list) and prompt:
        return [p if isinstance(p, str) or _is_tokens(p) else str(p) for p in prompt]
    return [str(prompt)]


def check_context_window(body: Mapping[str, Any], window: int) -> None:
    """Refuse, as OpenAI does, a request whose messages (or longest prompt) count more than
    ``window`` tokens (counted with :func:`parley.token_count_utils.count_token` for the
    request's model, or as ``gpt-4-0613`` when that model's chat format is unknown, such as
    ``fake-model``; a prompt of token ids counts its ids)."""
    from ..token_count_utils import count_token

    model = body["model"]
    if "messages" in body:
        what = "messages"
        try:
            tokens = count_token(body["messages"], model=model)
        except NotImplementedError:
            tokens = count_token(body["messages"], model="gpt-4-0613")
    else:
        what = "prompt"
        tokens = max(
            len(p) if isinstance(p, list) else count_token(p, model=model)
            for p in prompt_texts(body["prompt"])
        )
    if tokens > window:
        raise RequestError(
            f"This model's maximum context length is {window} tokens. However, your {what} "
            f"resulted in {tokens} tokens. Please reduce the length of the {what}.",
            what,
            "context_length_exceeded",
        )


def _check_model(body: Any) -> None:
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
        problem = image_part_problem(part, role, here) if part["type"] == "image_url" else None
        if problem is not None:
            raise RequestError(*problem)


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
    """The options chat and text completions share."""
    _check_bool(body, "stream")
    _check_int(body, "n", 1, 128)
    _check_number(body, "temperature", 0, 2)
    _check_number(body, "top_p", 0, 1)


def _check_completion_options(body: Mapping[str, Any]) -> None:
    """The legacy text-completion options, with the ranges of OpenAI's API reference."""
    _check_int(body, "best_of", 0, 20)
    _check_int(body, "logprobs", 0, 5)
    # 0 is allowed: echo=true with max_tokens=0 scores a prompt without generating.
    _check_int(body, "max_tokens", 0, None)
    _check_number(body, "presence_penalty", -2, 2)
    _check_number(body, "frequency_penalty", -2, 2)
    _check_bool(body, "echo")
    stop = body.get("stop")
    if stop is not None and not (
        isinstance(stop, str)
        or (isinstance(stop, list) and len(stop) <= 4 and all(isinstance(s, str) for s in stop))
    ):
        raise RequestError(
            f"Invalid 'stop': expected a string or an array of at most 4 strings, got {stop!r}.",
            "stop",
            "invalid_value",
        )
    best_of, n = body.get("best_of"), body.get("n")
    if best_of is not None and best_of < (1 if n is None else n):
        raise RequestError("best_of must be greater than or equal to n", "best_of")
    if best_of is not None and best_of > 1 and body.get("stream") is True:
        raise RequestError(
            "Cannot stream results when best_of is greater than 1: the best of several "
            "completions is known only once all of them are done.",
            "best_of",
        )


def _check_prompt(prompt: Any) -> None:
    if prompt is None or isinstance(prompt, str) or _is_tokens(prompt):
        return
    if isinstance(prompt, list) and prompt:
        if all(isinstance(p, str) for p in prompt) or all(_is_tokens(p) for p in prompt):
            return
    elif isinstance(prompt, list):
        raise RequestError(
            "Invalid 'prompt': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.",
            "prompt",
            "empty_array",
        )
    raise RequestError(
        "Invalid type for 'prompt': expected one of a string, an array of strings, an array of "
        f"integers (tokens) or an array of arrays of integers, but got {prompt!r} instead.",
        "prompt",
        "invalid_type",
    )


def _is_tokens(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in value)
    )


def _check_bool(body: Mapping[str, Any], key: str) -> None:
    value = body.get(key)
    if value is not None and not isinstance(value, bool):
        raise RequestError(f"Invalid type for '{key}': expected a boolean.", key, "invalid_type")


def _check_int(body: Mapping[str, Any], key: str, low: int, high: int | None) -> None:
    v = body.get(key)
    if v is None:
        return
    if isinstance(v, int) and not isinstance(v, bool) and v >= low and (high is None or v <= high):
        return
    wanted = f"from {low} to {high}" if high is not None else f">= {low}"
    raise RequestError(
        f"Invalid '{key}': expected an integer {wanted}, got {v!r}.", key, "invalid_value"
    )


def _check_number(body: Mapping[str, Any], key: str, low: float, high: float) -> None:
    v = body.get(key)
    if v is not None and (
        isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= high
    ):
        raise RequestError(
            f"Invalid '{key}': expected a number from {low} to {high}, got {v!r}.",
            key,
            "invalid_value",
        )
