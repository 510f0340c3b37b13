"""A provider's answer that is no reply, as one error: :class:`MalformedResponseError`.

A hostile or broken server (or a proxy in front of one) may answer a success with a body that
is not JSON, a JSON array, ``null``, ``{}``, or a reply whose fields have the wrong types. The
SDKs read such a body without checking it (they build their objects unvalidated) or fail in
their own ways; either way the caller would get a raw ``TypeError``, ``AttributeError``,
``JSONDecodeError`` or pydantic error from deep inside a client, or, worse, an empty reply.

- :func:`reading_reply`: around a native client's SDK call and its reading of the answer,
  those errors become a MalformedResponseError naming the provider and what was wrong;
- :func:`check_reply` and :func:`checked_chunks`: the OpenAI client's answers (a completion,
  or each chunk of a stream) checked field by field for what parley reads of them;
- :func:`malformed`: the error itself (a :class:`~parley.exceptions.ModelServerError`: the
  server's fault, retried and then moved past as a 5xx is).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .._credentials import redact
from ..exceptions import MalformedResponseError, ParleyError

__all__ = ["check_reply", "checked_chunks", "json_kind", "malformed", "reading_reply"]

_SHAPE_ERRORS = (TypeError, AttributeError, KeyError, IndexError, ValueError)
_MAX_PROBLEM = 600  # characters of the underlying error quoted in the message


def malformed(provider: str, problem: str, *, status: int | None = 200) -> MalformedResponseError:
    """The error for ``provider``'s answer that is no reply because of ``problem``."""
    if len(problem) > _MAX_PROBLEM:
        problem = problem[:_MAX_PROBLEM] + "..."
    return MalformedResponseError(
        redact(f"the answer is not a valid reply: {problem}"),
        provider=provider,
        status_code=status,
    )


@contextmanager
def reading_reply(provider: str, *, shapes: bool = True) -> Iterator[None]:
    """Turn the errors of reading a malformed answer inside the block (a JSON decoding error,
    a pydantic error, a ``TypeError`` or ``AttributeError`` of a field of the wrong type)
    into :func:`malformed`'s error, raised from them. parley's own errors pass through.

    Around an SDK call that also builds and checks the request, ``shapes=False`` turns only
    JSON decoding errors (which only an answer raises): a request the SDK refuses keeps its
    own error, rather than being blamed on the server."""
    try:
        yield
    except ParleyError:
        raise
    except json.JSONDecodeError as e:
        raise malformed(provider, f"the body is not JSON ({e})") from e
    except _SHAPE_ERRORS as e:
        if not shapes:
            raise
        raise malformed(provider, f"{type(e).__name__}: {e}") from e


def json_kind(value: Any) -> str:
    """What JSON ``value`` is, for a message: "a JSON array", "JSON null"..."""
    if value is None:
        return "JSON null"
    if isinstance(value, bool):
        return "a JSON boolean"
    if isinstance(value, (int, float)):
        return "a JSON number"
    if isinstance(value, str):
        return "a JSON string"
    if isinstance(value, (list, tuple)):
        return "a JSON array"
    return f"a {type(value).__name__}"


def _optional(value: Any, kind: type | tuple[type, ...]) -> bool:
    return value is None or isinstance(value, kind)


def _usage_problem(usage: Any) -> str | None:
    if usage is None:
        return None
    from openai.types import CompletionUsage

    if not isinstance(usage, CompletionUsage):
        return f"'usage' is {json_kind(usage)}, not an object"
    for name in ("prompt_tokens", "completion_tokens"):
        if not _optional(getattr(usage, name, None), int):
            return f"'usage.{name}' is not a number"
    return None


def _calls_problem(message: Any, where: str) -> str | None:
    calls = getattr(message, "tool_calls", None)
    if calls is None:
        return None
    if not isinstance(calls, list):
        return f"'{where}.tool_calls' is {json_kind(calls)}, not an array"
    for i, call in enumerate(calls):
        function = getattr(call, "function", None)
        if function is None or not isinstance(getattr(function, "name", ""), (str, type(None))):
            return f"'{where}.tool_calls[{i}]' has no function name"
        if not _optional(getattr(function, "arguments", None), str):
            return f"'{where}.tool_calls[{i}].function.arguments' is not a string"
    return None


def _message_problem(message: Any, where: str, message_type: type) -> str | None:
    if not isinstance(message, message_type):
        return f"'{where}' is {json_kind(message)}, not an object"
    content = getattr(message, "content", None)
    if not _optional(content, str):
        return f"'{where}.content' is {json_kind(content)}, not a string"
    legacy = getattr(message, "function_call", None)
    if legacy is not None and not _optional(getattr(legacy, "arguments", None), str):
        return f"'{where}.function_call.arguments' is not a string"
    return _calls_problem(message, where)


def _text_problem(choice: Any, i: int) -> str | None:
    """A text completion's choice ``i``: its ``text`` must be a string."""
    text = getattr(choice, "text", None)
    return None if _optional(text, str) else f"'choices[{i}].text' is not a string"


def _finish_problem(choice: Any, i: int) -> str | None:
    if not _optional(getattr(choice, "finish_reason", None), str):
        return f"'choices[{i}].finish_reason' is not a string"
    return None


def _choices_problem(
    choices: list[Any], own_problem: Callable[[Any, int], str | None], usage: Any
) -> str | None:
    """The first problem of a reply's (or chunk's) choices, each checked by ``own_problem``
    (its message, delta or text) then for its finish reason, else of its ``usage``."""
    for i, choice in enumerate(choices):
        problem = own_problem(choice, i) or _finish_problem(choice, i)
        if problem is not None:
            return problem
    return _usage_problem(usage)


def _completion_problem(response: Any, cls: type) -> str | None:
    """What is wrong with a non-streamed answer built (unchecked) as ``cls``, or None."""
    from openai.types.chat import ChatCompletion, ChatCompletionMessage
    from openai.types.chat.chat_completion import Choice
    from openai.types.completion_choice import CompletionChoice

    if not isinstance(response, cls):
        return f"the body is {json_kind(response)}, not a JSON object"
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list):
        return f"'choices' is {json_kind(choices)}, not an array"
    if not choices:
        return "'choices' is empty: no reply"
    if not _optional(getattr(response, "model", None), str):
        return "'model' is not a string"
    choice_cls = Choice if cls is ChatCompletion else CompletionChoice

    def message_problem(choice: Any, i: int) -> str | None:
        if not isinstance(choice, choice_cls):
            return f"'choices[{i}]' is {json_kind(choice)}, not an object"
        if cls is not ChatCompletion:
            return _text_problem(choice, i)
        message = getattr(choice, "message", None)
        return _message_problem(message, f"choices[{i}].message", ChatCompletionMessage)

    return _choices_problem(choices, message_problem, getattr(response, "usage", None))


def check_reply(response: Any, cls: type, provider: str) -> Any:
    """``response`` (an openai ``ChatCompletion`` or text ``Completion``, as ``cls``), checked
    for what parley reads of it; :func:`malformed`'s error naming the first problem."""
    problem = _completion_problem(response, cls)
    if problem is not None:
        raise malformed(provider, problem)
    return response


def _chunk_problem(chunk: Any, cls: type, first: bool) -> str | None:
    from openai.types.chat import ChatCompletionChunk
    from openai.types.chat.chat_completion_chunk import ChoiceDelta

    if not isinstance(chunk, cls):
        return f"it is {json_kind(chunk)}, not a JSON object"
    if first:
        for name, kind in (("id", str), ("model", str), ("created", int)):
            if not isinstance(getattr(chunk, name, None), kind):
                return f"'{name}' is missing or not a {kind.__name__}"
    choices = getattr(chunk, "choices", None)
    if not isinstance(choices, list):
        return f"'choices' is {json_kind(choices)}, not an array"

    def delta_problem(choice: Any, i: int) -> str | None:
        if not isinstance(getattr(choice, "index", None), int):
            return f"'choices[{i}].index' is missing or not a number"
        if cls is not ChatCompletionChunk:
            return _text_problem(choice, i)
        problem = _message_problem(
            getattr(choice, "delta", None), f"choices[{i}].delta", ChoiceDelta
        )
        for j, call in enumerate(getattr(choice.delta, "tool_calls", None) or ()):
            if problem is None and not isinstance(getattr(call, "index", None), int):
                problem = f"'choices[{i}].delta.tool_calls[{j}].index' is not a number"
        return problem

    return _choices_problem(choices, delta_problem, getattr(chunk, "usage", None))


async def checked_chunks(
    stream: AsyncIterable[Any], cls: type, provider: str
) -> AsyncIterator[Any]:
    """The chunks of ``stream`` (each built unchecked as ``cls``), each checked before it is
    collected; :func:`malformed`'s error for the first bad one, or for a stream without any."""
    count = 0
    async for chunk in stream:
        problem = _chunk_problem(chunk, cls, first=count == 0)
        if problem is not None:
            raise malformed(provider, f"stream chunk {count + 1}: {problem}")
        count += 1
        yield chunk
    if count == 0:
        raise malformed(provider, "the stream ended without a single chunk")
