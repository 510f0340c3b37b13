"""The tool side of a ``TagAgent``: reading a reply as a tool call, checking the user's tools,
listing them for the model, and the built-in tools that reach the user or the README."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._core.calls import call_user
from .._core.runtime import run_in_thread
from ..agentchat.conversable_agent import ConversableAgent
from ..io import IOStream
from ._tag_prompts import TagPrompts
from .loop_agent import ask_human

__all__ = [
    "BUILTINS",
    "TOOL_CALL",
    "Tool",
    "ToolCall",
    "ask_user",
    "check_readme",
    "check_tools",
    "describe_tools",
    "parse_tool_call",
    "read_readme",
    "run_tool",
    "tell_user",
]

Tool = Callable[[str], str | Awaitable[str]]

TOOL_CALL = re.compile(r"^<TOOL: ([A-Z_]+)>([\s\S]*?)</TOOL>$")
_TOOL_NAME = re.compile(r"[A-Z_]+")
# A second call inside the first one's input: the reply held several calls.
_ANOTHER_CALL = re.compile(r"<TOOL: [A-Z_]+>|</TOOL>")

BUILTINS: Mapping[str, str] = {
    "ASK_USER": "ask the user a question (input: the question; result: the user's answer)",
    "TELL_USER": "show the user a message (input: the message)",
    "READ_README": "read the README file the user named (input: ignored)",
    "END_RUN": "finish the task (input: your final answer)",
}


@dataclass(frozen=True)
class ToolCall:
    """A reply read as a tool call: the tool's name, its input (stripped) and whether the reply
    held more than one call (then none is run)."""

    name: str
    text: str
    several: bool = False


def parse_tool_call(reply: str) -> ToolCall | None:
    """The tool call that is the whole reply (surrounding whitespace aside), or None."""
    match = TOOL_CALL.match(reply.strip())
    if match is None:
        return None
    name, text = match.groups()
    return ToolCall(name, text.strip(), several=_ANOTHER_CALL.search(text) is not None)


def check_tools(tools: Mapping[str, Tool] | None) -> dict[str, Tool]:
    """The user's tools, checked: names in [A-Z_]+, no built-in shadowed, one-argument callables."""
    if tools is None:
        return {}
    if not isinstance(tools, Mapping):
        raise TypeError(
            "tools must be a mapping from tool name to function, e.g. "
            f"tools={{'SEARCH': search}}; got {type(tools).__name__}"
        )
    checked: dict[str, Tool] = {}
    for name, fn in tools.items():
        if not isinstance(name, str) or _TOOL_NAME.fullmatch(name) is None:
            raise ValueError(
                f"tool name {name!r} is not valid: use capital letters and underscores only "
                "(e.g. 'WEB_SEARCH'), as the model writes it in <TOOL: NAME>"
            )
        if name in BUILTINS:
            raise ValueError(
                f"tool name {name!r} is a built-in tool ({', '.join(BUILTINS)}); give yours "
                "another name"
            )
        if not callable(fn):
            raise TypeError(f"tool {name!r} must be a function, got {type(fn).__name__}")
        _check_takes_one_string(name, fn)
        checked[name] = fn
    return checked


def _check_takes_one_string(name: str, fn: Callable[..., Any]) -> None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # a builtin without a signature: trust it
    try:
        signature.bind("input")
    except TypeError:
        raise TypeError(
            f"tool {name!r} ({getattr(fn, '__qualname__', fn)!r}) must accept one argument, "
            f"the tool's input text; its signature is {signature}"
        ) from None


def _first_line(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.strip().splitlines()[0] if doc.strip() else "(no description)"


def describe_tools(tools: Mapping[str, Tool]) -> str:
    """One line per tool, the built-ins first; a user tool's line is its docstring's first."""
    lines = [f"- {name}: {about}" for name, about in BUILTINS.items()]
    lines += [f"- {name}: {_first_line(fn)}" for name, fn in tools.items()]
    return "\n".join(lines)


def check_readme(readme: str | Path | None) -> Path | None:
    """The README's absolute path; the file must exist when the agent is built."""
    if readme is None:
        return None
    if not isinstance(readme, (str, Path)):
        raise TypeError(f"readme must be a path (str or Path), got {type(readme).__name__}")
    path = Path(readme).expanduser().resolve()
    if not path.is_file():
        raise ValueError(f"readme {str(readme)!r} is not a file (looked at {path})")
    return path


# -- running a call: each returns the message the model reads next ------------------------


async def ask_user(agent: ConversableAgent, question: str, prompts: TagPrompts) -> str:
    answer = await ask_human(agent, f"{agent.name} asks: {question}\n> ")
    result = answer if answer.strip() else prompts.no_answer
    return prompts.render("tool_result", tool="ASK_USER", result=result)


async def tell_user(agent: ConversableAgent, message: str, prompts: TagPrompts) -> str:
    IOStream.get_default().print(f"{agent.name}: {message}", flush=True)
    return prompts.render("tool_result", tool="TELL_USER", result=prompts.told_user)


async def read_readme(path: Path | None, prompts: TagPrompts) -> str:
    if path is None:
        return prompts.render("tool_result", tool="READ_README", result=prompts.no_readme)
    try:
        text = await run_in_thread(path.read_text, encoding="utf-8", errors="replace")
    except OSError as error:
        return prompts.render(
            "tool_error", tool="READ_README", error=f"cannot read {path}: {error}"
        )
    return prompts.render("tool_result", tool="READ_README", result=text)


async def run_tool(name: str, fn: Tool, text: str, prompts: TagPrompts) -> str:
    """A user tool's result, or the tool_error prompt if it raised (the model may retry)."""
    try:
        result = await call_user(fn, text)
    except Exception as error:
        return prompts.render("tool_error", tool=name, error=f"{type(error).__name__}: {error}")
    if not isinstance(result, str):
        raise TypeError(
            f"tool {name!r} returned {type(result).__name__}; a tool must return a str (the text "
            "the model reads)"
        )
    return prompts.render("tool_result", tool=name, result=result)
