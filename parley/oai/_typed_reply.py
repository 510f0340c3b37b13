"""A typed reply: the model's answer checked against its :class:`OutputSchema`, asked again
with the problems shown when it does not conform, parsed onto the response when it does.

- :func:`with_instruction`: a prompted client's request (one whose API takes no schema) tells
  the model the schema in its system message;
- :func:`attach_parsed`: each text choice of a response validated, its parsed object set as
  ``choice.message.parsed`` (the name the openai SDK's ``parse`` uses); a choice that calls
  tools is not checked (tool calls come first, the final answer is typed);
- :func:`typed_response`: the loop over one config: a reply that does not conform is sent
  back, with what is wrong, as an assistant message and a user message, up to the config's
  ``structured_output_retries`` times (default 2); then :class:`StructuredOutputError`. The
  reply sent back keeps the reasoning items its model returned (the Responses API's
  ``parley_reasoning``), as the reply would in an agent's history.

The message content stays the model's text: the parsed object rides on the response only, so
a history, a cache entry and a journal record hold plain JSON text (the cache and the journal
leave ``parsed`` out; it is computed again when a stored response is read).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..exceptions import StructuredOutputError

if TYPE_CHECKING:
    from ._structured import OutputSchema

__all__ = [
    "PARSED",
    "attach_parsed",
    "retry_messages",
    "typed_response",
    "with_instruction",
]

#: The attribute of a response's message that holds its parsed object.
PARSED = "parsed"
_SYSTEM_ROLES = ("system", "developer")
# The Responses client's REASONING_KEY (providers._responses_items): the clients sit above this
# module, which the cache also reads, so the name is spelled out, as agentchat spells it.
_REASONING_KEY = "parley_reasoning"

T = TypeVar("T")


def with_instruction(
    messages: Sequence[Mapping[str, Any]], schema: OutputSchema
) -> list[dict[str, Any]]:
    """``messages`` with the schema's instruction at the end of the leading system message
    (a new one when there is none, or its content is not text); the given ones unchanged."""
    instruction = schema.instruction()
    out = [dict(m) for m in messages]
    first = out[0] if out else None
    if first is not None and first.get("role") in _SYSTEM_ROLES:
        content = first.get("content")
        if isinstance(content, str):
            first["content"] = f"{content}\n\n{instruction}" if content else instruction
            return out
    return [{"role": "system", "content": instruction}, *out]


def retry_messages(
    messages: Sequence[Mapping[str, Any]], error: StructuredOutputError, response: Any = None
) -> list[dict[str, Any]]:
    """``messages`` followed by the reply that failed (with the reasoning items its message
    in ``response`` carries) and what is wrong with it."""
    problems = "\n".join(f"- {p}" for p in error.errors)
    failed: dict[str, Any] = {"role": "assistant", "content": error.raw}
    reasoning = _reasoning_of(response, error.raw)
    if reasoning:
        failed[_REASONING_KEY] = reasoning
    return [
        *(dict(m) for m in messages),
        failed,
        {
            "role": "user",
            "content": (
                f"Your reply does not match the JSON schema {error.schema_name}:\n{problems}\n"
                "Reply again with only the corrected JSON value."
            ),
        },
    ]


def _reasoning_of(response: Any, raw: Any) -> list[Any]:
    """The reasoning items of ``response``'s choice whose text is ``raw``."""
    for choice in getattr(response, "choices", None) or ():
        message = getattr(choice, "message", None)
        if message is not None and getattr(message, "content", None) == raw:
            return list(getattr(message, _REASONING_KEY, None) or ())
    return []


def _calls_tools(message: Any) -> bool:
    return bool(getattr(message, "tool_calls", None) or getattr(message, "function_call", None))


def attach_parsed(schema: OutputSchema, response: Any) -> None:
    """Validate each text choice of ``response`` and set its message's ``parsed``;
    :class:`StructuredOutputError` for the first that does not conform."""
    for choice in getattr(response, "choices", None) or ():
        message = getattr(choice, "message", None)
        if message is None or _calls_tools(message):
            continue
        parsed = schema.validate(getattr(message, "content", None))
        try:
            setattr(message, PARSED, parsed)
        except (AttributeError, TypeError, ValueError):  # a custom client's frozen object
            pass


async def typed_response(
    schema: OutputSchema,
    params: Mapping[str, Any],
    retries: int,
    first: T,
    response_of: Callable[[T], Any],
    ask: Callable[[dict[str, Any]], Awaitable[T]],
) -> T:
    """``first`` (an answer to ``params``, whose response ``response_of`` gives) once its
    response conforms to ``schema``; otherwise ``ask(new params)`` with the failed reply and
    its problems appended to the messages, up to ``retries`` more times."""
    answer = first
    attempts = 1
    while True:
        try:
            attach_parsed(schema, response_of(answer))
            return answer
        except StructuredOutputError as error:
            if attempts > retries:
                raise schema.error(error.raw, error.errors, attempts) from error
            messages = retry_messages(params["messages"], error, response_of(answer))
            params = {**params, "messages": messages}
        answer = await ask(params)
        attempts += 1
