"""A ReAct agent's tools: finding one by the name a model wrote, running it, and adapting the
functions registered on the agent (``register_for_llm`` / ``register_for_execution`` /
``function_map``) into tools.

Whatever goes wrong while a tool runs (an unknown name, input a function cannot take, an
exception) becomes the observation the model reads next, so it can correct itself.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._core.calls import call_user
from ..exceptions import ArgumentsValidationError
from ..function_utils import serialize_to_str, validate_arguments
from ._registered import registered_functions

if TYPE_CHECKING:
    from ..agentchat.conversable_agent import ConversableAgent
    from .react import Tool

__all__ = ["FunctionTool", "check_tool", "index_tools", "registered_tools", "run_tool", "tool_key"]

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def tool_key(name: str) -> str:
    """How a tool's name is matched: case and runs of spaces do not count."""
    return " ".join(name.split()).casefold()


def check_tool(tool: object, where: str) -> None:
    """Raise if ``tool`` is not a usable tool (``where`` names it in the message)."""
    missing = [a for a in ("name", "description", "use") if not hasattr(tool, a)]
    if missing:
        hint = (
            "; to use a plain function, register it on the agent (agent.register_for_llm(...) "
            "and agent.register_for_execution(), or function_map={name: func})"
            if callable(tool)
            else ""
        )
        raise TypeError(
            f"{where} is not a tool: a tool has `name`, `description` and `use(input: str) -> "
            f"str`; {type(tool).__name__} lacks {', '.join(missing)}{hint}"
        )
    name = getattr(tool, "name", None)
    if not isinstance(name, str) or not name.strip() or "\n" in name:
        raise ValueError(f"{where} has an invalid name {name!r}: use a non-empty, one-line str")
    if not isinstance(getattr(tool, "description", None), str):
        raise TypeError(f"the description of tool {name!r} must be a str")
    if not callable(getattr(tool, "use", None)):
        raise TypeError(f"the `use` of tool {name!r} must be callable: use(input: str) -> str")


def index_tools(tools: Iterable[Tool]) -> dict[str, Tool]:
    """The tools by :func:`tool_key`; two tools a model could not tell apart raise."""
    indexed: dict[str, Tool] = {}
    for tool in tools:
        key = tool_key(tool.name)
        if key in indexed:
            raise ValueError(
                f"two tools are named {tool.name!r}"
                + ("" if indexed[key].name == tool.name else f" and {indexed[key].name!r}")
                + ": tool names must differ (ignoring case), or the model cannot pick one"
            )
        indexed[key] = tool
    return indexed


async def run_tool(tool: Tool, tool_input: str) -> str:
    """What ``tool`` returned for ``tool_input``, or the error it raised, as text."""
    try:
        result = await call_user(tool.use, tool_input)
    except Exception as error:
        return f"Error: tool {tool.name!r} raised {type(error).__name__}: {error}"
    return result if isinstance(result, str) else str(result)


@dataclass(frozen=True)
class FunctionTool:
    """A function registered on the agent, used as a tool.

    One parameter gets the Action Input as it is (converted to the annotated type); several
    get it parsed as a JSON object of arguments. An input that is a JSON object of the
    function's parameter names is taken as its arguments in either case.
    """

    name: str
    description: str
    func: Callable[..., Any]

    async def use(self, input: str) -> str:
        target = getattr(self.func, "_origin", self.func)
        params = [p for p in inspect.signature(target).parameters.values() if p.kind in _NAMED]
        arguments = _arguments(input, params)
        if isinstance(arguments, str):
            return arguments
        if not getattr(self.func, "_parley_validates", False):
            try:
                arguments = validate_arguments(self.func, arguments, name=self.name)
            except ArgumentsValidationError as error:
                return str(error)
        try:
            result = await call_user(self.func, **arguments)
        except ArgumentsValidationError as error:
            return str(error)
        return serialize_to_str(result)


def _arguments(text: str, params: list[inspect.Parameter]) -> dict[str, Any] | str:
    """The keyword arguments for ``text``, or the observation saying why there are none."""
    names = [p.name for p in params]
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and names and set(parsed) <= set(names):
        return parsed
    required = [p.name for p in params if p.default is inspect.Parameter.empty]
    if len(params) == 1 or len(required) == 1:
        return {(required or names)[0]: text}
    if not params:
        return {}
    example = json.dumps(dict.fromkeys(names, "..."))
    return (
        f"This tool takes several arguments ({', '.join(names)}): write its Action Input as "
        f"one JSON object, e.g. {example}. Got: {text}"
    )


def registered_tools(agent: ConversableAgent) -> list[FunctionTool]:
    """The functions registered on ``agent`` as tools, described by their schemas (or, for a
    function given only in ``function_map``, by its docstring)."""
    tools = []
    for name, registered in registered_functions(agent.llm_config, agent.function_map).items():
        if registered.func is None:
            raise ValueError(
                f"tool {name!r} is registered for the model of agent {agent.name!r} "
                "(register_for_llm) but not for execution: a ReActAgent runs its tools itself, "
                f"so also register it with @{agent.name}.register_for_execution() (or give it "
                "in function_map)"
            )
        tools.append(FunctionTool(name, registered.description, registered.func))
    return tools
