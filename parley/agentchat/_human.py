"""Termination and human input: the first reply function of every agent.

Also parley's review hook: ``agent.register_human_review(fn)`` lets a function play the human
without a terminal — it sees the pending message and answers approve (``""``), feedback (any
other text) or ``"exit"``; see :class:`ReviewRequest`. The same hook answers for the tools
registered with ``requires_approval=True`` (``_approval``): the request then carries the
:class:`PendingToolCall`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._core import reports as _reports
from .._core.calls import call_user
from ..code_utils import content_str
from ..usage._run import note_end
from . import _delivery
from ._journaled import journaled_human

if TYPE_CHECKING:
    from .._agent_protocol import Agent
    from ..types import FunctionResponse, Message, ToolResponse
    from ._state import AgentCore, History

__all__ = [
    "APPROVE",
    "EXIT",
    "PendingToolCall",
    "ReviewRequest",
    "check_termination_and_human_reply",
    "is_termination",
]

logger = logging.getLogger(__name__)

APPROVE = ""
EXIT = "exit"


@dataclass(frozen=True)
class PendingToolCall:
    """A call of a tool registered with ``requires_approval=True``, waiting for the human:
    the tool's name, its arguments (parsed and checked against its signature) and the call's
    id (None for a legacy function call)."""

    name: str
    arguments: Mapping[str, Any]
    call_id: str | None


@dataclass(frozen=True)
class ReviewRequest:
    """What a review function sees when the agent would ask its human.

    ``message`` is the pending message (the last one the agent received, the one it is about
    to answer); ``prompt`` the question a terminal user would see. Return ``APPROVE`` (or
    ``None``) to let the agent answer on its own, ``EXIT`` to end the chat, or any other text
    to send it as the human's reply.

    ``tool_call`` is set when the agent asks to run a tool that requires approval (None
    otherwise); ``message`` then holds that one call. Return ``APPROVE`` (or ``None``) to run
    it, any other text to reject it with that feedback (the model reads it as the call's
    result), or ``EXIT`` to reject it and end the chat after this turn.
    """

    agent: str
    sender: str | None
    message: Mapping[str, Any]
    prompt: str
    human_input_mode: str
    tool_call: PendingToolCall | None = None


def is_termination(predicate: Callable[[dict[str, Any]], Any], message: Mapping[str, Any]) -> bool:
    """Apply a termination predicate to any message without letting it crash the chat.

    A predicate written for string content (``m["content"].endswith("TERMINATE")``) fails on a
    tool-call message (content None) or a multimodal one (a list): it is then asked again with
    the content as text, and if it still fails the message does not terminate (AutoGen #279).
    """
    try:
        return bool(predicate(dict(message)))
    except (TypeError, AttributeError, KeyError, IndexError, ValueError):
        pass
    try:
        as_text = dict(message)
        as_text["content"] = content_str(message.get("content"))
        return bool(predicate(as_text))
    except Exception as e:
        logger.warning(
            "is_termination_msg raised %s on %r; treating it as not terminating", e, message
        )
        return False


async def ask_human(
    agent: AgentCore,
    prompt: str,
    message: Mapping[str, Any],
    sender: Agent | None,
    tool_call: PendingToolCall | None = None,
) -> str:
    """One answer from the agent's human: its review function, an override, or the IOStream
    (in a durable chat, the answer the journal recorded)."""
    with _reports.asking_human(agent, prompt, sender, tool_call):
        return await journaled_human(
            agent, prompt, lambda: _ask_human(agent, prompt, message, sender, tool_call)
        )


async def _ask_human(
    agent: AgentCore,
    prompt: str,
    message: Mapping[str, Any],
    sender: Agent | None,
    tool_call: PendingToolCall | None,
) -> str:
    review = agent.state.human_review
    if review is not None:
        request = ReviewRequest(
            agent=agent.name,
            sender=getattr(sender, "name", None),
            message=dict(message),
            prompt=prompt,
            human_input_mode=agent.human_input_mode,
            tool_call=tool_call,
        )
        answer = await call_user(review, request)
        text = "" if answer is None else str(answer)
        agent.state.human_input.append(text)
        return text
    return await _delivery.get_human_input(agent, prompt)


def _interrupted(message: Message) -> list[ToolResponse | FunctionResponse]:
    """Answers for the calls the human interrupted, so the API still sees each one answered."""
    out: list[ToolResponse | FunctionResponse] = []
    fc = message.get("function_call")
    if fc:
        out.append({"role": "function", "name": fc.get("name", ""), "content": "USER INTERRUPTED"})
    for tc in message.get("tool_calls") or ():
        out.append(
            {"role": "tool", "tool_call_id": tc.get("id", ""), "content": "USER INTERRUPTED"}
        )
    return out


def _why_exit(typed_exit: bool, terminating: bool) -> str:
    """The termination reason of a chat this check ends."""
    if typed_exit:
        return "human_exit"
    if terminating:
        return "is_termination_msg"
    return "max_consecutive_auto_reply"


async def check_termination_and_human_reply(
    agent: AgentCore, messages: History = None, sender: Agent | None = None, config: Any = None
) -> tuple[bool, Message | None]:
    """Terminate, let the human answer, or fall through to an automatic reply."""
    from ..io import IOStream

    out = IOStream.get_default()
    if messages is None:
        messages = agent.state.messages[sender] if sender is not None else []
    message: Message = messages[-1] if messages else {}
    mode = agent.human_input_mode
    count = agent.state.auto_reply_counter[sender]
    limit = agent.state.max_auto_reply_per_sender[sender]
    sender_name = "the sender" if sender is None else sender.name
    predicate = agent.state.is_termination_msg
    terminating = bool(message) and is_termination(predicate, message)
    reply = ""
    asked = False

    async def ask(prompt: str) -> str:
        nonlocal asked
        asked = True
        return await ask_human(agent, prompt, message, sender)

    if mode == "ALWAYS":
        reply = await ask(
            f"Provide feedback to {sender_name}. Press enter to skip and use auto-reply, "
            "or type 'exit' to end the conversation: "
        )
    elif count >= limit or terminating:
        if mode == "NEVER":
            reply = EXIT
        else:
            skip = " to skip and use auto-reply," if count >= limit and not terminating else ""
            reply = await ask(
                f"Please give feedback to {sender_name}. Press enter{skip} or type 'exit' to stop "
                "the conversation: "
            )
    typed_exit = asked and reply == EXIT
    if asked and not reply:
        out.print("\n>>>>>>>> NO HUMAN INPUT RECEIVED.", flush=True)
        if terminating:
            reply = EXIT  # an empty answer to a termination message ends the chat

    if reply == EXIT:
        agent.state.auto_reply_counter[sender] = 0
        note_end(_why_exit(typed_exit, terminating))
        return True, None
    if reply or (asked and limit == 0):
        agent.state.auto_reply_counter[sender] = 0
        response: Message = {"role": "user", "content": reply}
        interrupted = _interrupted(message)
        if interrupted:
            response["tool_responses"] = interrupted
        return True, response
    agent.state.auto_reply_counter[sender] += 1
    if mode != "NEVER":
        out.print("\n>>>>>>>> USING AUTO REPLY...", flush=True)
    return False, None
