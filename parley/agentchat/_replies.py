"""Built-in reply functions after the termination check: tool calls, function calls, the LLM.

Each takes ``(agent, messages, sender, config)`` and returns ``(final, reply)`` (spec 2.4). A
model's mistake (an unknown tool, arguments that are not JSON, a tool that raises) becomes an
error message for the model, never an exception that ends the chat.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._calls import call_user
from ._messages import request_messages, sanitize_name

if TYPE_CHECKING:
    from .conversable_agent import ConversableAgent

__all__ = [
    "execute_function",
    "generate_function_call_reply",
    "generate_oai_reply",
    "generate_tool_calls_reply",
]

logger = logging.getLogger(__name__)

_API_MESSAGE_KEYS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "function_call"}
)


def _last(
    agent: ConversableAgent, messages: list[dict[str, Any]] | None, sender: Any
) -> dict[str, Any]:
    if messages is None:
        messages = agent._oai_messages[sender]
    return messages[-1] if messages else {}


def _clean_arguments(text: str) -> str:
    """AutoGen's repair of model-written JSON: raw newlines and tabs inside strings are escaped,
    those outside strings dropped."""
    out: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            elif ch == "\n":
                out.append("\\n")
                continue
            elif ch == "\t":
                out.append("\\t")
                continue
        elif ch == '"':
            in_string = True
        elif ch in "\r\n":
            continue
        out.append(ch)
    return "".join(out)


def _error(name: str, text: str) -> tuple[bool, dict[str, Any]]:
    return False, {"name": name, "role": "function", "content": f"Error: {text}"}


async def execute_function(
    agent: ConversableAgent,
    func_call: Mapping[str, Any],
    call_id: str | None = None,
    verbose: bool = False,
) -> tuple[bool, dict[str, Any]]:
    """Run one function call from a model; ``(success, {"name", "role": "function", "content"})``."""
    from ..io import IOStream

    name = str(func_call.get("name") or "")
    func = agent._function_map.get(name)
    if func is None:
        known = ", ".join(sorted(agent._function_map)) or "none"
        return _error(name, f"Function {name} not found. Available functions: {known}.")
    raw = func_call.get("arguments")
    raw = "{}" if raw is None else raw
    try:
        arguments = json.loads(_clean_arguments(raw)) if isinstance(raw, str) else raw
    except json.JSONDecodeError as e:
        return _error(name, f"{e}\n The argument must be in JSON format.")
    if not isinstance(arguments, dict):
        return _error(
            name, f"the arguments must be a JSON object, got {type(arguments).__name__}: {raw}"
        )
    if not getattr(func, "_parley_validates", False):
        from ..function_utils import ArgumentsValidationError, validate_arguments

        try:
            arguments = validate_arguments(func, arguments)
        except ArgumentsValidationError as e:
            return _error(name, str(e))
    out = IOStream.get_default()
    call_text = f"\nCall ID: {call_id}" if call_id else ""
    out.print(
        f"\n>>>>>>>> EXECUTING FUNCTION {name}...{call_text}\nInput arguments: {arguments}",
        flush=True,
    )
    try:
        result = await call_user(func, **arguments)
    except Exception as e:
        from ..function_utils import ArgumentsValidationError

        logger.info("function %s raised %s: %s", name, type(e).__name__, e)
        if isinstance(e, ArgumentsValidationError):
            return _error(name, str(e))
        return _error(name, f"{type(e).__name__}: {e}")
    content = result if isinstance(result, str) else str(result)
    if verbose:
        out.print(f"\nInput arguments: {arguments}\nOutput:\n{content}", flush=True)
    return True, {"name": name, "role": "function", "content": content}


async def generate_function_call_reply(
    agent: ConversableAgent,
    messages: list[dict[str, Any]] | None = None,
    sender: Any = None,
    config: Any = None,
) -> tuple[bool, dict[str, Any] | None]:
    """Execute a legacy ``function_call`` of the last message."""
    message = _last(agent, messages, sender)
    func_call = message.get("function_call")
    if not func_call:
        return False, None
    _, result = await execute_function(agent, func_call)
    return True, result


async def generate_tool_calls_reply(
    agent: ConversableAgent,
    messages: list[dict[str, Any]] | None = None,
    sender: Any = None,
    config: Any = None,
) -> tuple[bool, dict[str, Any] | None]:
    """Execute every tool call of the last message, concurrently; answers come back in order."""
    message = _last(agent, messages, sender)
    calls = message.get("tool_calls") or []
    if not calls:
        return False, None

    async def run(call: Mapping[str, Any]) -> dict[str, Any]:
        function = call.get("function") or {}
        _, result = await execute_function(agent, function, call_id=call.get("id"))
        response: dict[str, Any] = {"role": "tool", "content": result["content"] or ""}
        if call.get("id") is not None:
            response["tool_call_id"] = call["id"]
        return response

    responses = list(await asyncio.gather(*(run(c) for c in calls)))
    content = "\n\n".join(str(r["content"]) for r in responses)
    return True, {"role": "tool", "tool_responses": responses, "content": content}


def _normalize_reply(reply: Any) -> Any:
    if hasattr(reply, "model_dump"):
        reply = reply.model_dump(exclude_none=True)
    if not isinstance(reply, dict):
        return reply
    if reply.get("function_call") and reply["function_call"].get("name"):
        reply["function_call"]["name"] = sanitize_name(reply["function_call"]["name"])
    for tc in reply.get("tool_calls") or ():
        fn = tc.get("function") or {}
        if fn.get("name"):
            fn["name"] = sanitize_name(fn["name"])
        for key in ("id", "type"):
            if key in tc and tc[key] is None:
                del tc[key]
    return reply


async def generate_oai_reply(
    agent: ConversableAgent,
    messages: list[dict[str, Any]] | None = None,
    sender: Any = None,
    config: Any = None,
) -> tuple[bool, Any]:
    """Ask the agent's model for the reply (spec 2.12)."""
    client = config if config is not None else agent.client
    if client is None:
        return False, None
    if messages is None:
        messages = agent._oai_messages[sender]
    context = messages[-1].pop("context", None) if messages else None
    request = request_messages(agent._oai_system_message, messages)
    response = await client.a_create(
        context=context, messages=request, cache=agent.client_cache, agent=agent
    )
    extracted = client.extract_text_or_completion_object(response)[0]
    if extracted is None:
        logger.warning("the model returned no content and no tool call: %r", response)
        return False, None
    return True, _normalize_reply(extracted)


# Names of tools and functions as the API accepts them.
VALID_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
