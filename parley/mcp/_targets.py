"""What ``parley mcp serve SCRIPT:NAME`` can serve, turned into MCP-neutral tool descriptions.

An agent's registered functions become one tool each; a chat (a manager, a pair, a sequence,
or a factory making one) becomes one tool taking ``task``. Nothing here imports the ``mcp``
SDK: :mod:`parley.mcp.serve` turns these into the SDK's types.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..agentchat import ChatResult, ConversableAgent, GroupChatManager, _queue
from ..code_utils import content_text
from ..function_utils import get_function_schema

__all__ = ["CHAT_INPUT_SCHEMA", "CHAT_OUTPUT_SCHEMA", "Outcome", "ServedTool", "served_tools"]

CHAT_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"task": {"type": "string", "description": "what the agents should do"}},
    "required": ["task"],
}
CHAT_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {"type": "string"},
        "messages": {"type": "integer", "description": "messages in the chat's history"},
        "termination_reason": {"type": ["string", "null"]},
        "cost": {"type": ["object", "null"], "description": "AutoGen's ChatResult.cost"},
    },
    "required": ["summary", "messages"],
}


@dataclass(frozen=True)
class Outcome:
    """A tool's answer: its text, structured content (or None), whether it failed, and the
    content parts of a result with images (None for text)."""

    text: str
    structured: dict[str, Any] | None = None
    is_error: bool = False
    parts: list[Any] | None = None


@dataclass(frozen=True)
class ServedTool:
    name: str
    description: str
    input_schema: dict[str, Any]
    call: Callable[[dict[str, Any]], Awaitable[Outcome]]
    output_schema: dict[str, Any] | None = None
    is_chat: bool = False


def served_tools(target: Any, name: str, description: str | None = None) -> list[ServedTool]:
    """The tools ``target`` (see :mod:`parley.mcp.serve`) offers; ``name`` names a chat's tool."""
    if isinstance(target, GroupChatManager | tuple):
        plan = _plan(target, name)
        lock = asyncio.Lock()  # the same agents every call: one chat at a time

        async def make() -> _Plan:
            await lock.acquire()
            return plan

        return [_chat_tool(name, description or _default_description(name), make, lock)]
    if isinstance(target, ConversableAgent):
        return _agent_tools(target)
    if callable(target):
        factory = target

        async def build() -> _Plan:
            made = factory()
            if asyncio.iscoroutine(made):
                made = await made
            return _plan(made, name)

        doc = (getattr(factory, "__doc__", None) or "").strip()
        return [_chat_tool(name, description or doc or _default_description(name), build, None)]
    raise TypeError(
        f"{name!r} is a {type(target).__name__}: parley can serve an agent (its registered "
        "functions), a GroupChatManager, a (sender, recipient[, initiate_chat kwargs]) tuple, "
        "a (sender, [chat dicts]) tuple for sequential chats, or a callable returning one"
    )


# -- an agent's functions ---------------------------------------------------------------------


def _agent_tools(agent: ConversableAgent) -> list[ServedTool]:
    described: dict[str, Mapping[str, Any]] = {}
    config = agent.llm_config if isinstance(agent.llm_config, Mapping) else {}
    for entry in config.get("tools") or ():
        function = entry.get("function") if isinstance(entry, Mapping) else None
        if isinstance(function, Mapping) and function.get("name"):
            described[str(function["name"])] = function
    for function in config.get("functions") or ():
        if isinstance(function, Mapping) and function.get("name"):
            described.setdefault(str(function["name"]), function)
    tools = [
        _function_tool(agent, name, func, described.get(name))
        for name, func in agent.function_map.items()
        if func is not None
    ]
    if not tools:
        raise ValueError(
            f"agent {agent.name!r} has no registered functions to serve (register them with "
            "register_for_execution or register_function; to serve its chats, give a chat)"
        )
    return tools


def unanswerable_approvals(target: Any) -> list[str]:
    """The functions of an agent ``target`` that need approval while nobody can give it over
    stdio (no review function: its console is the protocol's stdin, diverted by the SDK)."""
    from ..agentchat._approval import requires_approval

    if not isinstance(target, ConversableAgent) or target.state.human_review is not None:
        return []
    return sorted(name for name, f in target.function_map.items() if requires_approval(f))


def _function_tool(
    agent: ConversableAgent, name: str, func: Any, schema: Mapping[str, Any] | None
) -> ServedTool:
    if schema is None:  # registered for execution only: describe it as the caller's model would
        origin = getattr(func, "_origin", func)  # private-ok: AutoGen's attribute on a tool
        marked = getattr(origin, "_description", None)  # private-ok: AutoGen's marker
        text = marked or (origin.__doc__ or "").strip() or name
        schema = get_function_schema(origin, name=name, description=text)["function"]
    parameters = dict(schema.get("parameters") or {"type": "object", "properties": {}})

    async def call(arguments: dict[str, Any]) -> Outcome:
        # The agent's own tool path: argument checks, reports, the durable journal.
        success, message = await agent.a_execute_function(
            {"name": name, "arguments": json.dumps(arguments)}
        )
        content = message.get("content")
        if isinstance(content, list):  # a result with images (agentchat/_tool_content)
            return Outcome(content_text(content), is_error=not success, parts=list(content))
        return Outcome(str(content or ""), is_error=not success)

    return ServedTool(name, str(schema.get("description") or name), parameters, call)


# -- a chat -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    sender: ConversableAgent
    recipient: ConversableAgent | None  # None: sequential ``chats``
    kwargs: Mapping[str, Any]
    chats: Sequence[Mapping[str, Any]] = ()


def _default_description(name: str) -> str:
    return f"Run the parley chat {name!r} on a task; the answer is the chat's summary."


def _plan(made: Any, name: str) -> _Plan:
    if isinstance(made, GroupChatManager):
        agents = made.groupchat.agents
        if not agents or not isinstance(agents[0], ConversableAgent):
            raise ValueError(f"{name!r}: the group chat has no agent to send the task")
        return _Plan(agents[0], made, {})  # the group's first agent sends the task
    if isinstance(made, tuple) and len(made) in (2, 3):
        sender, second = made[0], made[1]
        kwargs = made[2] if len(made) == 3 else {}
        if not isinstance(sender, ConversableAgent) or not isinstance(kwargs, Mapping):
            raise TypeError(f"{name!r}: a chat tuple is (sender agent, recipient[, kwargs dict])")
        if isinstance(second, ConversableAgent):
            if "message" in kwargs:
                raise ValueError(f"{name!r}: the task is the chat's message; drop 'message'")
            return _Plan(sender, second, kwargs)
        if isinstance(second, list | tuple) and second and len(made) == 2:
            if "message" in second[0]:
                raise ValueError(f"{name!r}: the task is the first chat's message; drop it there")
            return _Plan(sender, None, {}, tuple(second))
    raise TypeError(
        f"{name!r} made a {type(made).__name__}, not a GroupChatManager, a (sender, recipient"
        "[, kwargs]) tuple or a (sender, [chat dicts]) tuple"
    )


def _chat_tool(
    name: str,
    description: str,
    make: Callable[[], Awaitable[_Plan]],
    lock: asyncio.Lock | None,
) -> ServedTool:
    async def call(arguments: dict[str, Any]) -> Outcome:
        task = arguments.get("task")
        if not isinstance(task, str) or not task.strip():
            return Outcome("the argument 'task' must be a non-empty string", is_error=True)
        plan = await make()
        try:
            result = await _run(plan, task)
        finally:
            if lock is not None:
                lock.release()
        return _outcome(result)

    return ServedTool(
        name, description, CHAT_INPUT_SCHEMA, call, output_schema=CHAT_OUTPUT_SCHEMA, is_chat=True
    )


async def _run(plan: _Plan, task: str) -> tuple[ChatResult, int]:
    if plan.recipient is not None:
        result = await plan.sender.a_initiate_chat(plan.recipient, message=task, **plan.kwargs)
        return result, len(result.chat_history or [])
    chats = [{**plan.chats[0], "message": task}, *(dict(c) for c in plan.chats[1:])]
    # In order, each chat carrying the summaries of those before it: ``initiate_chats``'s
    # runner (``a_initiate_chats`` is AutoGen's other queue: concurrent, by prerequisites).
    results = await _queue.run_sequential(chats, plan.sender)
    return results[-1], sum(len(r.chat_history or []) for r in results)


def _outcome(ran: tuple[ChatResult, int]) -> Outcome:
    result, messages = ran
    summary = result.summary if isinstance(result.summary, str) else str(result.summary or "")
    cost = json.loads(json.dumps(result.cost, default=str)) if result.cost else None
    structured = {
        "summary": summary,
        "messages": messages,
        "termination_reason": getattr(result, "termination_reason", None),
        "cost": cost,
    }
    return Outcome(summary, structured)
