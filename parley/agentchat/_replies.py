"""Built-in reply functions after the termination check: tool calls, function calls, the LLM.

Each takes ``(agent, messages, sender, config)`` and returns ``(final, reply)``. A
model's mistake (an unknown tool, arguments that are not JSON or nested more than
``MAX_NESTING`` levels deep, a tool that raises) becomes an error message for the model, never
an exception that ends the chat (AutoGen let a RecursionError from deeply nested arguments
through).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import reprlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .._core import reports as _reports
from .._core.calls import call_user
from .._core.runtime import to_thread
from ..exceptions import BudgetExceededError
from . import _approval
from ._client_reply import ask_client, own_step
from ._journaled import journaled_tool
from ._messages import MAX_NESTING, content_text, fill_template
from ._tool_content import tool_content

if TYPE_CHECKING:
    from .._agent_protocol import Agent
    from ..types import FunctionCall, FunctionResponse, Message, ToolResponse, ToolResultContent
    from ._state import AgentCore, History

__all__ = [
    "PrepareRequest",
    "Request",
    "execute_function",
    "generate_function_call_reply",
    "generate_oai_reply",
    "generate_tool_calls_reply",
    "prepare_request",
]

logger = logging.getLogger(__name__)

_API_MESSAGE_KEYS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "function_call"}
)


def _last(agent: AgentCore, messages: list[Message] | None, sender: Agent | None) -> Message:
    if messages is None:
        messages = agent.state.messages[sender]
    return messages[-1] if messages else {}


def _clean_arguments(text: str) -> tuple[str, int]:
    """AutoGen's repair of model-written JSON: raw newlines and tabs inside strings are escaped,
    those outside strings dropped. Also the deepest nesting of brackets outside strings, so
    that arguments too deep to parse are refused before ``json.loads`` recurses on them (an
    upper bound of it when that is known to be within ``MAX_NESTING``)."""
    brackets = text.count("{") + text.count("[")
    if brackets <= MAX_NESTING and "\n" not in text and "\t" not in text and "\r" not in text:
        # Nothing to repair and too few brackets to nest too deep: no walk through the text
        # character by character (half a millisecond for a tool writing a 10 kB file).
        return text, brackets
    out: list[str] = []
    in_string = escaped = False
    depth = deepest = 0
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
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
        elif ch in "\r\n":
            continue
        out.append(ch)
    return "".join(out), deepest


def _nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether parsed JSON ``value`` nests lists and dicts more than ``limit`` deep (without
    recursing, so any depth can be measured)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


_TOO_DEEP = (
    f"the arguments are nested more than {MAX_NESTING} levels deep. Send them as a flatter "
    "JSON object."
)


def _error(name: str, text: str) -> tuple[bool, Message]:
    return False, {"name": name, "role": "function", "content": f"Error: {text}"}


async def execute_function(
    agent: AgentCore,
    func_call: FunctionCall | Mapping[str, Any],
    call_id: str | None = None,
    verbose: bool = False,
) -> tuple[bool, Message]:
    """Run one function call from a model; ``(success, {"name", "role": "function", "content"})``."""
    from ..io import IOStream

    name = str(func_call.get("name") or "")
    func = agent.function_map.get(name)
    if func is None:
        return _error(name, f"Function {name} not found.")  # AutoGen's text
    raw = func_call.get("arguments")
    raw = "{}" if raw is None else raw
    if isinstance(raw, str):
        text, depth = _clean_arguments(raw)
        if depth > MAX_NESTING:
            return _error(name, _TOO_DEEP)
        try:
            arguments = json.loads(text)
        except json.JSONDecodeError as e:
            return _error(name, f"{e}\n The argument must be in JSON format.")
    elif _nested_deeper_than(raw, MAX_NESTING):
        return _error(name, _TOO_DEEP)
    else:
        arguments = raw
    if not isinstance(arguments, dict):
        shown = raw if isinstance(raw, str) else reprlib.repr(raw)
        return _error(
            name, f"the arguments must be a JSON object, got {type(arguments).__name__}: {shown}"
        )
    validates = getattr(func, "_parley_validates", False)
    needs_approval = _approval.requires_approval(func)
    if needs_approval or not validates:
        from ..function_utils import ArgumentsValidationError, validate_arguments

        try:
            # A call needing approval is checked before the human sees it, even when its
            # wrapper checks again: nobody is asked about a call that cannot run.
            checked = validate_arguments(func, arguments, name=name)
        except ArgumentsValidationError as e:
            return _error(name, str(e))
        if needs_approval:
            refused = await _approval.approve(agent, name, arguments, call_id)
            if refused is not None:
                return refused
        if not validates:
            arguments = checked
    out = IOStream.get_default()
    call_text = f"\nCall ID: {call_id}" if call_id else ""
    out.print(
        f"\n>>>>>>>> EXECUTING FUNCTION {name}...{call_text}\nInput arguments: {arguments}",
        flush=True,
    )
    approval = "approved" if needs_approval else None

    async def run() -> tuple[bool, Message]:
        with _reports.tool_call_step(agent, name, arguments, call_id, approval) as step:
            success, reply = await _call_tool(func, name, arguments, verbose)
            # Listeners (logs, traces, the web page) get text: an image is "<image>".
            step.end(success=success, result=content_text(reply["content"]))
        return success, reply

    return await journaled_tool(agent.name, func, name, call_id, arguments, run)


async def _call_tool(
    func: Any, name: str, arguments: dict[str, Any], verbose: bool
) -> tuple[bool, Message]:
    from ..io import IOStream

    try:
        result = await call_user(func, **arguments)
    except BudgetExceededError:
        raise  # the tool asked a model past the chat's budget: the turn ends (not the model's error)
    except Exception as e:
        logger.info("function %s raised %s: %s", name, type(e).__name__, e)
        return _error(name, str(e))  # AutoGen's text: "Error: " and the exception's own
    try:
        content = tool_content(result)  # str(result), or image parts (see _tool_content)
    except Exception as e:  # a result nested too deeply to print (RecursionError), a broken __str__
        logger.info("the result of function %s cannot be shown: %s: %s", name, type(e).__name__, e)
        return _error(name, f"{type(e).__name__}: the result of {name} cannot be turned into text")
    if verbose:
        IOStream.get_default().print(
            f"\nInput arguments: {arguments}\nOutput:\n{content_text(content)}", flush=True
        )
    return True, {"name": name, "role": "function", "content": content}


async def generate_function_call_reply(
    agent: AgentCore, messages: History = None, sender: Agent | None = None, config: Any = None
) -> tuple[bool, Message | None]:
    """Execute a legacy ``function_call`` of the last message."""
    message = _last(agent, messages, sender)
    func_call = message.get("function_call")
    if not func_call:
        return False, None
    with _approval.one_message(sender):
        _, result = await execute_function(agent, func_call)
    return True, result


async def generate_tool_calls_reply(
    agent: AgentCore, messages: History = None, sender: Agent | None = None, config: Any = None
) -> tuple[bool, Message | None]:
    """Execute every tool call of the last message, concurrently; answers come back in order
    (the human is asked about the calls that need approval one at a time, in order)."""
    message = _last(agent, messages, sender)
    calls = message.get("tool_calls") or []
    if not calls:
        return False, None

    async def run(call: Mapping[str, Any]) -> ToolResponse:
        function = call.get("function") or {}
        _, result = await execute_function(agent, function, call_id=call.get("id"))
        # Text, or the parts of a result with images (as a replayed journal record holds them).
        content = cast("ToolResultContent", result["content"] or "")
        response: ToolResponse = {"role": "tool", "content": content}
        if call.get("id") is not None:
            response["tool_call_id"] = call["id"]
        return response

    with _approval.one_message(sender):
        if len(calls) == 1:
            # The usual case, awaited in place: a task of its own cost about 40 µs a call (an
            # MCP tool's round trip is under a millisecond).
            outcomes: list[Any] = [await run(calls[0])]
        else:
            # A call that fails the turn (its approval paused a durable chat, say) waits for
            # the others: an approved call already running finishes and its result is
            # recorded, instead of running on unobserved and being found unfinished when the
            # chat resumes.
            outcomes = await asyncio.gather(*(run(c) for c in calls), return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    responses = cast("list[ToolResponse | FunctionResponse]", outcomes)
    content = "\n\n".join(content_text(r["content"]) for r in responses)
    return True, {"role": "tool", "tool_responses": responses, "content": content}


Request = tuple[Any, Sequence[Mapping[str, Any]]]
"""A model request: the template context of the last message (or None) and the messages."""

PrepareRequest = Callable[["AgentCore", "list[Message]", Any], Awaitable[Request]]
"""How a reply turns the history into a request (:func:`prepare_request`, or an agent's own
that builds on it, as the multimodal agent's encodes its images)."""


async def prepare_request(
    agent: AgentCore, messages: list[Message], sender: Agent | None
) -> Request:
    """The request for a reply to ``messages``: the last message's context taken out (it goes
    with this request only) and its template filled, then the system message and the history
    as the API takes them, built by the conversation's memo."""
    context = messages[-1].pop("context", None) if messages else None
    if context:
        content = messages[-1].get("content")
        if content is not None and not isinstance(content, (str, list)):
            # A callable or jinja2 template can be filled only while its context is known, and
            # a later request cannot carry it unfilled: the stored message keeps its text.
            messages[-1]["content"] = fill_template({"content": content, "context": context})
    speakers = (agent.name, getattr(sender, "name", agent.name))
    return context, agent.state.request_memo(sender, speakers).build(
        agent.state.system_message,
        messages,
    )


async def generate_oai_reply(
    agent: AgentCore,
    messages: History = None,
    sender: Agent | None = None,
    config: Any = None,
    *,
    prepare: PrepareRequest = prepare_request,
) -> tuple[bool, Any]:
    """Ask the agent's model for the reply (the request made by ``prepare``).

    An agent whose ``_generate_oai_reply_from_client`` is its own (an override or a patch) is
    asked through it as AutoGen asked it: the client, the system message followed by the
    history as stored (the last message's ``context`` still in it), the agent's cache; in a
    worker thread, as user code that may block. An agent with its own ``prepare`` (the
    multimodal agent) asks the client itself, as AutoGen's did."""
    client = config if config is not None else agent.client
    if client is None:
        return False, None
    if messages is None:
        messages = agent.state.messages[sender]
    own = own_step(agent) if prepare is prepare_request else None
    if own is not None:
        history = [*agent.state.system_message, *messages]
        reply = await to_thread(own, client, history, agent.client_cache)
    else:
        context, request = await prepare(agent, messages, sender)
        reply = await ask_client(agent, client, context, request, agent.client_cache)
    return (False, None) if reply is None else (True, reply)


# Names of tools and functions as the API accepts them.
VALID_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
