"""Tool calls for Ollama models without native tool calling (``native_tool_calls: False``),
as AutoGen's Ollama client emulated them: the tools are described in the system prompt with a
required JSON reply format, the model's JSON reply is read back as tool calls, and tool results
go back to it as user text. ``hide_tools`` stops offering the tools once they have run, so a
small model does not call them again and again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._messages import FunctionSpec, content_text, tools_hidden

__all__ = [
    "STEP_ONE",
    "STEP_TWO",
    "parse_tool_calls",
    "should_hide_tools",
    "tool_instructions",
    "tool_results_text",
]

STEP_ONE = " (proceed with step 1)"
STEP_TWO = " (proceed with step 2)"

_INSTRUCTIONS = (
    "You are to follow a strict two step process that will occur over a number of "
    "interactions, so pay attention to what step you are in based on the full conversation. "
    "We will be taking turns so only do one step at a time so don't perform step 2 until step "
    "1 is complete and I've told you the result. The first step is to choose one or more "
    "functions based on the request given and return only JSON with the functions and "
    "arguments to use. The second step is to analyse the given output of the function and "
    "summarise it returning only TEXT and not Python or JSON. For argument values, be sure "
    "numbers aren't strings, they should not have double quotes around them. In terms of your "
    "response format, for step 1 return only JSON and NO OTHER text, for step 2 return only "
    "text and NO JSON/Python/Markdown. The format for running a function is "
    '[{"name": "function_name1", "arguments":{"argument_name": "argument_value"}},'
    '{"name": "function_name2", "arguments":{"argument_name": "argument_value"}}] '
    "Make sure the keys 'name' and 'arguments' are as described. If you don't get the format "
    "correct, try again. The following functions are available to you:"
)


def tool_instructions(specs: Sequence[FunctionSpec]) -> str:
    """The system prompt's part that offers the tools and asks for the JSON reply."""
    declared = [
        {"name": s.name, "description": s.description, "parameters": s.parameters} for s in specs
    ]
    return _INSTRUCTIONS + json.dumps(declared)


def should_hide_tools(
    messages: Sequence[Mapping[str, Any]], specs: Sequence[FunctionSpec], hide_tools: str
) -> bool:
    """AutoGen's ``hide_tools`` for the tools ``specs`` (:func:`~._messages.tools_hidden`)."""
    return tools_hidden(messages, [s.name for s in specs], hide_tools)


def tool_results_text(results: Sequence[tuple[str, Any]]) -> str:
    """Tool results (function name, content) as the user text that reports them."""
    lines = [f"The result of calling {name}: {content_text(content)}" for name, content in results]
    return "\n".join(lines)


def _candidates(text: str) -> Iterable[Any]:
    """Every JSON value that starts at a ``[`` or ``{`` of ``text``, longest spans first met
    (a reply may wrap its JSON in prose or a Markdown fence)."""
    decoder = json.JSONDecoder()
    position = 0
    while True:
        starts = [i for i in (text.find("[", position), text.find("{", position)) if i >= 0]
        if not starts:
            return
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        yield value
        position = end


def _as_call(item: Any, names: frozenset[str] | None) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
        return None
    if names is not None and item["name"] not in names:
        return None
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return None
    if not isinstance(arguments, Mapping):
        return None
    return str(item["name"]), dict(arguments)


def parse_tool_calls(
    text: str | None, names: Iterable[str] | None
) -> list[tuple[str, dict[str, Any]]]:
    """The calls (name, arguments) a reply asks for: the first JSON list or object in it whose
    items all name one of the tools ``names`` (any name when None); [] when there is none (a
    text reply)."""
    if not text:
        return []
    known = None if names is None else frozenset(names)
    for value in _candidates(text):
        items = value if isinstance(value, list) else [value]
        calls = [_as_call(item, known) for item in items]
        if items and all(call is not None for call in calls):
            return [call for call in calls if call is not None]
    return []
