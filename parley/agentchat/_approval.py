"""Approvals: the executor asks its human before a tool call or code blocks run.

A tool registered with ``requires_approval=True`` (``register_function``,
``register_for_execution``, ``MCPToolkit.register``) carries the marker
``_parley_requires_approval``. When the executor is about to run a call of it (the arguments
parsed and checked, ``_replies.execute_function``), :func:`approve` asks the agent's human,
whatever its ``human_input_mode``: its review function if one is registered (a
``ReviewRequest`` whose ``tool_call`` is set), else ``get_human_input`` (an override of it, or
the current IOStream). The answer decides:

- empty (a review's ``APPROVE``, or None): the call runs;
- ``"exit"``: the call does not run, and the chat is stopped (``ChatRun.stop("human_exit")``,
  as a budget stops it): the turn finishes, its reply goes out, and the chat ends before the
  next turn with ``termination_reason == "human_exit"``. The later calls of the message that
  need approval are rejected without asking;
- any other text: the call does not run; the model reads ``Error: the human rejected the call
  of NAME: TEXT`` as its result.

Answers are recorded as the human's (``ChatResult.human_input``) and go through the durable
journal like every human answer, so a resumed chat replays them instead of asking again.

The calls of one message run concurrently; their questions are asked one at a time, in the
order of the calls (:func:`one_message`), so that prompts never interleave on a console.

Code blocks the same way (:func:`approve_code`): an agent whose ``code_execution_config`` has
``"requires_approval": True`` asks before it runs the blocks of a message (all of them, one
question; the review's ``ReviewRequest.code_blocks``). Rejected, they do not run and the model
reads ``exitcode: 1 (execution failed)`` with ``Error: the human rejected the code: TEXT`` as
their output; ``"exit"`` also stops the chat after the turn.

In a durable chat the question is journaled with what it is about (the call's name, arguments
and id, or the blocks), so the pending input a paused or dead chat leaves in its store says
what waits for approval; once answered, ``resume`` replays the answer and runs (or refuses)
exactly that call.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._core import reports as _reports
from ..usage._run import current_run
from ._human import APPROVE, EXIT, PendingToolCall, ask_human

if TYPE_CHECKING:
    from .._agent_protocol import Agent
    from ..coding.base import CodeBlock
    from ..types import Message
    from ._state import AgentCore

__all__ = ["approve", "approve_code", "mark", "one_message", "requires_approval"]


def mark(func: Callable[..., Any]) -> None:
    """Mark ``func`` (as it sits in an executor's function map) as needing approval."""
    func._parley_requires_approval = True  # type: ignore[attr-defined]


def requires_approval(func: Any) -> bool:
    return bool(getattr(func, "_parley_requires_approval", False))


@dataclass(eq=False)
class _Message:
    """The approvals of one message's calls: who sent it, and one question at a time."""

    sender: Agent | None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    failed: bool = False  # asking failed (a paused or closed human): ask no more of them


_message: contextvars.ContextVar[_Message | None] = contextvars.ContextVar(
    "parley_approvals", default=None
)


@contextmanager
def one_message(sender: Agent | None) -> Iterator[None]:
    """The calls made in the block are one message's (from ``sender``): their approvals are
    asked one at a time, in the order the calls reach :func:`approve`."""
    token = _message.set(_Message(sender))
    try:
        yield
    finally:
        _message.reset(token)


async def approve(
    agent: AgentCore, name: str, arguments: Mapping[str, Any], call_id: str | None
) -> tuple[bool, Message] | None:
    """Ask the human about one call: None when it may run, else the reply that stands for it
    (reported as a tool call that failed, with ``approval="rejected"``)."""
    message = _message.get()
    if message is None:
        refused = await _ask(agent, name, arguments, call_id, None)
    else:
        async with message.lock:
            if message.failed:
                # The message's turn is failing already (the exception is on its way out):
                # asking again would only leave a second question behind.
                refused = _rejected(name, "the human could not be asked")
            else:
                try:
                    refused = await _ask(agent, name, arguments, call_id, message.sender)
                except BaseException:
                    message.failed = True
                    raise
    if refused is not None:
        from ..io import IOStream

        with _reports.tool_call_step(
            agent, name, dict(arguments), call_id, approval="rejected"
        ) as step:
            step.end(success=False, result=refused[1]["content"])
        IOStream.get_default().print(
            f"\n>>>>>>>> NOT RUNNING FUNCTION {name}: {refused[1]['content']}", flush=True
        )
    return refused


async def _ask(
    agent: AgentCore,
    name: str,
    arguments: Mapping[str, Any],
    call_id: str | None,
    sender: Agent | None,
) -> tuple[bool, Message] | None:
    call = PendingToolCall(name, dict(arguments), call_id)
    refused = await _decide(
        agent, f"the call of {name}", _prompt(call), _call_message(call, sender), sender, call
    )
    return None if refused is None else (False, _result(name, refused))


async def approve_code(
    agent: AgentCore, blocks: Sequence[CodeBlock], message: Mapping[str, Any], sender: Agent | None
) -> str | None:
    """Ask the human about the code ``blocks`` of ``message``: None when they may run, else
    the text the model reads as their output (they are reported as a code execution that
    failed, with ``approval="rejected"``)."""
    from ..io import IOStream

    shown = tuple(blocks)
    refused = await _decide(agent, "the code", _code_prompt(shown), message, sender, None, shown)
    if refused is not None:
        languages, codes = [b.language for b in shown], [b.code for b in shown]
        with _reports.code_execution_step(agent, languages, codes, approval="rejected") as step:
            step.end(exit_code=1, output=refused)
        IOStream.get_default().print(f"\n>>>>>>>> NOT RUNNING THE CODE: {refused}", flush=True)
    return refused


async def _decide(
    agent: AgentCore,
    subject: str,
    prompt: str,
    message: Mapping[str, Any],
    sender: Agent | None,
    call: PendingToolCall | None,
    blocks: tuple[CodeBlock, ...] | None = None,
) -> str | None:
    """The human's decision on ``subject`` (a call, the code): None to run it, else why not."""
    run = current_run()
    if run is not None and run.stopped() is not None:
        return f"Error: {subject} was not run: the conversation is ending."
    try:
        answer = await ask_human(agent, prompt, message, sender, call, blocks)
    except EOFError:
        # A closed input (a served process whose stdin is the protocol's, a script run with
        # < /dev/null) is nobody's consent: it is refused, the chat goes on.
        return f"Error: {subject} was not run: no human can answer (the input is closed)."
    if answer == APPROVE:
        return None
    if answer == EXIT:
        if run is not None:
            run.stop("human_exit")
        return f"Error: the human rejected {subject} and ended the conversation."
    return f"Error: the human rejected {subject}: {answer}"


def _rejected(name: str, why: str) -> tuple[bool, Message]:
    return False, _result(name, f"Error: the call of {name} was not run: {why}.")


def _result(name: str, text: str) -> Message:
    return {"name": name, "role": "function", "content": text}


def _json(arguments: Mapping[str, Any], indent: int | None = None) -> str:
    return json.dumps(arguments, indent=indent, ensure_ascii=False, default=str)


def _prompt(call: PendingToolCall) -> str:
    ident = f" (call ID: {call.call_id})" if call.call_id else ""
    return (
        f"Approve the call of {call.name}{ident} with these arguments?\n"
        f"{_json(call.arguments, 2)}\n"
        "Press enter to run it, type feedback to reject it, or type 'exit' to reject it and "
        "end the conversation: "
    )


def _call_message(call: PendingToolCall, sender: Agent | None) -> dict[str, Any]:
    """The message a review sees: the one call, as the model asked for it."""
    function = {"name": call.name, "arguments": _json(call.arguments)}
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if sender is not None:
        message["name"] = sender.name
    if call.call_id is None:
        message["function_call"] = function
    else:
        message["tool_calls"] = [{"id": call.call_id, "type": "function", "function": function}]
    return message


def _code_prompt(blocks: tuple[CodeBlock, ...]) -> str:
    shown = "\n".join(f"```{b.language}\n{b.code.rstrip()}\n```" for b in blocks)
    what, it = (
        ("this code block", "it")
        if len(blocks) == 1
        else (f"these {len(blocks)} code blocks", "them")
    )
    return (
        f"Approve running {what}?\n{shown}\n"
        f"Press enter to run {it}, type feedback to reject {it}, or type 'exit' to reject {it} "
        "and end the conversation: "
    )
