"""A chat from its start to its result: checks, the exchange of messages, carryover, summary
(made by ``_summary``).

Differences from AutoGen, on purpose: agent names the OpenAI API refuses as a message
``name`` are refused as the chat starts (:func:`check_names`), before anything is stored or
sent, instead of by the API at the first request that carries one (which may be many requests
into the chat).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._core import journal as _journal
from .._core import reports as _reports
from .._core.calls import call_user
from .._core.runtime import to_thread
from ..exceptions import InvalidCarryOverType
from ..oai._streaming import echo_silenced
from ..usage import Usage
from ..usage import _run as _usage
from ..usage._budget import checked as checked_budget
from . import _delivery
from ._chat_result import ChatResult
from ._journaled import open_journal
from ._messages import check_agent_names
from ._state import as_dicts
from ._summary import summarize
from ._typed_messages import chat_parsed
from .utils import consolidate_chat_info

if TYPE_CHECKING:
    from ._state import AgentCore

__all__ = [
    "CARRYOVER_LABEL",
    "ChatSetup",
    "carryover_item_text",
    "carryover_text",
    "check_names",
    "run_chat",
    "with_carryover",
]

logger = logging.getLogger(__name__)


def _participants(sender: Any, recipient: Any) -> list[Any]:
    agents = [sender, recipient]
    for agent in (sender, recipient):
        groupchat = _groupchat_of(agent)
        if groupchat is not None:
            agents.extend(groupchat.nested_agents())
    return agents


def _groupchat_of(agent: Any) -> Any:
    """The group chat ``agent`` manages, if it is a group chat manager."""
    groupchat = getattr(agent, "groupchat", None)
    return groupchat if callable(getattr(groupchat, "nested_agents", None)) else None


def check_names(sender: Any, recipient: Any, summary_method: Any = None) -> None:
    """Refuse the chat if one of its agents' names would be refused by the model.

    Every message carries its speaker's name and every agent that answers with a model sends
    its history, names included, to that model. So when one agent of the chat (the two agents;
    for a group chat also every member, in nested groups too) has an LLM client, every name in
    it is checked: the agents, the group manager and the members. A group manager's own model
    doesn't count, as it only picks speakers and sees sanitized names; it does when it writes
    a ``reflection_with_llm`` summary of the chat.
    """
    if _groupchat_of(sender) is None and _groupchat_of(recipient) is None:
        # Two agents: the roles tell them apart, and their requests leave out a name the API
        # would refuse (``_messages.request_messages``): nothing to refuse.
        return
    agents = _participants(sender, recipient)
    reader = next(
        (a for a in agents if getattr(a, "client", None) is not None and _groupchat_of(a) is None),
        None,
    )
    if reader is None and summary_method == "reflection_with_llm":
        reader = recipient if getattr(recipient, "client", None) is not None else sender
    if reader is not None:
        check_agent_names(agents, reader)


def carryover_item_text(item: Any) -> str:
    """One carryover item as text: a str itself, a message dict its ``content``, anything else
    ``str(item)``."""
    if isinstance(item, str):
        return item
    if isinstance(item, dict) and "content" in item:
        return str(item["content"])
    return str(item)


CARRYOVER_LABEL = "\nContext: \n"
"""What separates a first message from the carryover appended to it (AutoGen's text)."""


def carryover_text(carryover: Any) -> str:
    """The carryover as text: a str as is; a list's items joined by newlines, each a str as
    is, a dict's ``content``, or ``str(item)``; InvalidCarryOverType for anything else."""
    if isinstance(carryover, str):
        return carryover
    if isinstance(carryover, list):
        return "\n".join(carryover_item_text(item) for item in carryover)
    raise InvalidCarryOverType(
        "Carryover should be a string or a list of strings. Not adding carryover to the message."
    )


def with_carryover(content: str, carryover: Any) -> str:
    """``content`` followed by the carryover (unchanged without one)."""
    if not carryover:
        return content
    return content + CARRYOVER_LABEL + carryover_text(carryover)


class ChatSetup:
    """What a chat takes from its sender's overridable helpers (AutoGen's ``_prepare_chat``,
    ``_is_silent``'s answer for this chat, and ``_summarize_chat`` when the sender has its
    own), as the sender hands them over."""

    __slots__ = ("prepare", "silenced", "summarize")

    def __init__(
        self,
        prepare: Callable[..., None],
        silenced: bool,
        summarize: Callable[..., Any] | None = None,
    ) -> None:
        self.prepare = prepare
        self.silenced = silenced
        self.summarize = summarize


async def run_chat(
    sender: AgentCore,
    setup: ChatSetup,
    recipient: AgentCore,
    *,
    clear_history: bool,
    silent: bool | None,
    cache: Any,
    max_turns: int | None,
    summary_method: str | Callable[..., Any] | None,
    summary_args: dict[str, Any] | None,
    message: Any,
    kwargs: dict[str, Any],
) -> ChatResult:
    """The body of ``a_initiate_chat``: check, exchange messages, summarize."""
    consolidate_chat_info(
        {"recipient": recipient, "summary_method": summary_method}, uniform_sender=sender
    )
    budget = checked_budget(kwargs.pop("budget", None))
    check_names(sender, recipient, summary_method)
    chat_args = {
        "clear_history": clear_history,
        "silent": silent,
        "max_turns": max_turns,
        "summary_method": summary_method,
        "summary_args": {k: v for k, v in (summary_args or {}).items() if k != "cache"},
        "message": message,
    }
    journal = await open_journal(kwargs, sender, recipient, chat_args)
    try:
        agents = [sender, recipient]
        for agent in agents:
            agent.previous_cache = agent.client_cache
            agent.client_cache = cache
        recipient_name = getattr(recipient, "name", None)
        with _usage.chat_run(sender.name, recipient_name, budget) as run:
            report = _reports.chat_step(sender, recipient, run, message, max_turns)
            with report, _journal.scope(journal):
                try:
                    await _exchange(
                        sender, setup, recipient, clear_history, silent, max_turns, message, kwargs
                    )
                    reason = run.termination_reason()
                    with (
                        echo_silenced(bool(silent)),
                        _reports.summary_step(recipient, summary_method) as summary_step,
                    ):
                        summary = await _summary(
                            sender, setup, recipient, summary_method, summary_args, cache
                        )
                        summary_step.end(summary)
                finally:
                    for agent in agents:
                        agent.client_cache = agent.previous_cache
                        agent.previous_cache = None
                usage = Usage(run.all_calls())
                history = as_dicts(list(sender.state.messages[recipient]))
                result = ChatResult(
                    chat_history=history,
                    summary=summary,
                    cost=usage.to_autogen(),
                    human_input=list(sender.state.human_input),
                    termination_reason=reason,
                    usage=usage,
                    run_id=run.id,
                    parsed=chat_parsed(history, sender, recipient),
                )
                report.end(
                    termination_reason=reason, summary=summary, cost=result.cost, usage=usage
                )
                if journal is not None:
                    await journal.end(reason)
        return result
    finally:
        if journal is not None:
            await journal.close()  # its lease: another run may resume the chat now


async def _summary(
    sender: AgentCore,
    setup: ChatSetup,
    recipient: AgentCore,
    method: str | Callable[..., Any] | None,
    summary_args: dict[str, Any] | None,
    cache: Any,
) -> Any:
    """The chat's summary: through the sender's own ``_summarize_chat`` as AutoGen called it
    (a copy of ``summary_args``), else parley's."""
    if setup.summarize is not None:
        return await to_thread(
            setup.summarize, method, dict(summary_args or {}), recipient, cache=cache
        )
    args = dict(summary_args or {})  # a copy: AutoGen wrote the cache into the caller's dict
    args.setdefault("cache", cache)
    return await summarize(sender, recipient, method, args)


async def _first_message(
    sender: AgentCore, message: Any, recipient: AgentCore, kwargs: dict[str, Any]
) -> Any:
    """The chat's first message: ``message``, made by it if it is a callable, or the human's."""
    if callable(message):
        return await call_user(message, sender, recipient, kwargs)
    return await _delivery.generate_init_message(sender, message, **kwargs)


async def _exchange(
    sender: AgentCore,
    setup: ChatSetup,
    recipient: AgentCore,
    clear_history: bool,
    silent: bool | None,
    max_turns: int | None,
    message: Any,
    kwargs: dict[str, Any],
) -> None:
    # What the sender writes is printed (by the recipient) as this silence says: so is what
    # it streams.
    silenced = setup.silenced
    prepare = setup.prepare
    if not isinstance(max_turns, int):
        prepare(recipient, clear_history)
        with echo_silenced(silenced):
            first = await _first_message(sender, message, recipient, kwargs)
        await _delivery.send(sender, first, recipient, silent=silent)
        return
    prepare(recipient, clear_history, reply_at_receive=False)
    for turn in range(max_turns):
        with echo_silenced(silenced):
            if turn == 0:
                msg = await _first_message(sender, message, recipient, kwargs)
            else:
                history = sender.state.messages[recipient]
                msg = await _delivery.generate_reply(sender, history, recipient)
        if msg is None:
            return
        await _delivery.send(sender, msg, recipient, request_reply=True, silent=silent)
        run = _usage.current_run()
        if run is not None and run.stopped() is not None:
            return
    _usage.note_end("max_turns")
