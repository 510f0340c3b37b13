"""One run of a ``TagAgent``'s loop: ask the model, read its reply as a tool call, answer it,
until ``END_RUN`` or the step limit. The run's prompts, tools and memory are given explicitly, so
``optimize`` can run a candidate set of prompts without touching the agent's own."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..agentchat.conversable_agent import ConversableAgent
from ..code_utils import content_str
from ._tag_prompts import TagPrompts
from ._tag_tools import (
    BUILTINS,
    Tool,
    ToolCall,
    ask_user,
    describe_tools,
    parse_tool_call,
    read_readme,
    run_tool,
    tell_user,
)
from .loop_agent import ask_model

__all__ = ["LoopSetup", "StopReason", "Transcript", "run_loop", "system_text"]

StopReason = Literal["end_run", "max_steps"]


@dataclass(frozen=True)
class Transcript:
    """What one run did: the messages the model saw (the system message aside), the reply the
    run returned, why it stopped, how many model calls it made and what they cost."""

    task: str
    messages: tuple[dict[str, Any], ...]
    reply: str
    stop_reason: StopReason
    steps: int
    cost: float = 0.0

    def text(self) -> str:
        """The messages as plain text, one block per message (for a judge or an optimiser)."""
        return "\n\n".join(
            f"[{m.get('role', '?')}]\n{content_str(m.get('content'))}" for m in self.messages
        )


@dataclass(frozen=True)
class LoopSetup:
    """What a run needs besides its agent: prompts, tools, README and step limit."""

    prompts: TagPrompts
    tools: Mapping[str, Tool]
    readme: Path | None
    max_steps: int


def system_text(name: str, setup: LoopSetup) -> str:
    """The system message: the manifesto, then the protocol with the tool list."""
    prompts = setup.prompts
    manifesto = prompts.render("manifesto", name=name)
    protocol = prompts.render("protocol", tools=describe_tools(setup.tools))
    return f"{manifesto}\n\n{protocol}" if manifesto.strip() else protocol


async def run_loop(
    agent: ConversableAgent, setup: LoopSetup, task: str, memory: list[dict[str, Any]]
) -> Transcript:
    """Run the loop on ``task``, appending every message to ``memory`` as it goes."""
    prompts = setup.prompts
    system = {"role": "system", "content": system_text(agent.name, setup)}
    memory.append({"role": "user", "content": prompts.render("task", task=task)})
    cost = 0.0
    for step in range(1, setup.max_steps + 1):
        turn = await ask_model(agent, [system, *memory])
        cost += turn.cost
        memory.append({"role": "assistant", "content": turn.text})
        call = parse_tool_call(turn.text)
        if call is not None and call.name == "END_RUN" and not call.several:
            return _transcript(task, memory, call.text, "end_run", step, cost)
        memory.append({"role": "user", "content": await _answer(agent, setup, call)})
    reply = prompts.render("limit_reached", steps=setup.max_steps)
    return _transcript(task, memory, reply, "max_steps", setup.max_steps, cost)


def _transcript(
    task: str,
    memory: list[dict[str, Any]],
    reply: str,
    reason: StopReason,
    steps: int,
    cost: float,
) -> Transcript:
    return Transcript(task, tuple(dict(m) for m in memory), reply, reason, steps, cost)


async def _answer(agent: ConversableAgent, setup: LoopSetup, call: ToolCall | None) -> str:
    """The message the model reads after its reply: a tool's result or a correction."""
    prompts = setup.prompts
    names = ", ".join([*BUILTINS, *setup.tools])
    if call is None:
        return prompts.render("protocol_reminder", tools=names)
    if call.several:
        return prompts.one_tool_per_reply
    if call.name == "ASK_USER":
        return await ask_user(agent, call.text, prompts)
    if call.name == "TELL_USER":
        return await tell_user(agent, call.text, prompts)
    if call.name == "READ_README":
        return await read_readme(setup.readme, prompts)
    fn = setup.tools.get(call.name)
    if fn is None:
        return prompts.render("unknown_tool", tool=call.name, tools=names)
    return await run_tool(call.name, fn, call.text, prompts)
