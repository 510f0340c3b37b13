"""A chat from its start to its result: checks, the exchange of messages, carryover, summary.

Differences from AutoGen, on purpose: agent names the OpenAI API refuses as a message
``name`` are refused as the chat starts (:func:`check_names`), before anything is stored or
sent, instead of by the API at the first request that carries one (which may be many requests
into the chat).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from .._core import journal as _journal
from .._core import reports as _reports
from .._core.calls import call_user
from ..exceptions import BudgetExceededError, InvalidCarryOverType
from ..oai._streaming import echo_silenced
from ..usage import Usage
from ..usage import _run as _usage
from ..usage._budget import checked as checked_budget
from . import _delivery
from ._chat_result import ChatResult
from ._client_reply import client_reply
from ._journaled import open_journal
from ._messages import check_agent_names
from ._state import as_dicts
from .utils import SUMMARY_METHODS, consolidate_chat_info

if TYPE_CHECKING:
    from ._state import AgentCore

__all__ = [
    "CARRYOVER_LABEL",
    "DEFAULT_SUMMARY_PROMPT",
    "SUMMARY_METHODS",
    "ChatSetup",
    "carryover_item_text",
    "carryover_text",
    "check_names",
    "last_msg_summary",
    "reflect",
    "reflection_summary",
    "run_chat",
    "summarize",
    "with_carryover",
]

logger = logging.getLogger(__name__)

DEFAULT_SUMMARY_PROMPT = (
    "Summarize the takeaway from the conversation. Do not add any introductory phrases."
)


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


def last_msg_summary(recipient: AgentCore, sender: AgentCore) -> str:
    try:
        last = recipient.last_message(sender)
        if last is None:
            raise TypeError("there is no last message")
        content = last["content"]
    except (IndexError, AttributeError, KeyError, TypeError) as e:
        logger.warning("cannot take the last message as the summary: %s", e)
        return ""
    if isinstance(content, str):
        return content.replace("TERMINATE", "")
    if isinstance(content, list):
        texts = [
            str(p.get("text", "")).replace("TERMINATE", "")
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        ]
        return "\n".join(texts)
    return ""


async def reflect(
    agent: AgentCore,
    prompt: str,
    messages: list[dict[str, Any]],
    llm_agent: Any = None,
    cache: Any = None,
    role: str | None = None,
    *,
    speakers: Collection[str] = (),
) -> Any:
    """AutoGen's ``_reflection_with_llm``: the model's answer to ``messages`` followed by
    ``prompt`` as a ``role`` message (``"system"`` by default), asked of ``llm_agent``'s client
    (``agent``'s when it has none) through ``agent``'s ``_generate_oai_reply_from_client``."""
    asked = llm_agent if getattr(llm_agent, "client", None) is not None else agent
    client = getattr(asked, "client", None)
    if client is None:
        raise ValueError("No OpenAIWrapper client is found.")
    request = [*messages, {"role": role or "system", "content": prompt}]
    with _usage.acting_for(asked, "summary"):
        return await client_reply(agent, client, request, cache, speakers)


async def reflection_summary(
    sender: AgentCore, recipient: AgentCore, args: Mapping[str, Any]
) -> Any:
    """AutoGen's ``_reflection_with_llm_as_summary``: the recipient's model (the sender's
    when it has none) summarizes their chat; "" when the API refuses the request, the last
    message when a budget refuses it before it is sent."""
    prompt = args.get("summary_prompt") or DEFAULT_SUMMARY_PROMPT
    if not isinstance(prompt, str):
        raise ValueError(f"summary_prompt must be a str, got {type(prompt).__name__}")
    role = args.get("summary_role") or "system"
    if not isinstance(role, str):
        raise ValueError(f"summary_role must be a str, got {type(role).__name__}")
    history = list(recipient.chat_messages_for_summary(sender))
    import openai

    try:
        summary = await reflect(
            sender,
            prompt,
            history,
            recipient,
            args.get("cache"),
            role,
            speakers=(sender.name, recipient.name),
        )
    except openai.BadRequestError as e:
        logger.warning("cannot summarize the chat with the LLM: %s", e)
        return ""
    except BudgetExceededError as e:  # refused before it was sent: the last message stands in
        logger.warning("%s: the chat's summary is its last message", e)
        return last_msg_summary(recipient, sender)
    return summary if summary is not None else ""


async def summarize(
    sender: AgentCore,
    recipient: AgentCore,
    method: str | Callable[..., Any] | None,
    args: dict[str, Any],
) -> Any:
    """The chat's summary by ``method``: none, the last message, the model's reflection on
    the chat, or a callable's ``(sender, recipient, summary_args)``."""
    if method is None:
        return ""
    if method == "last_msg":
        return last_msg_summary(recipient, sender)
    if method == "reflection_with_llm":
        return await reflection_summary(sender, recipient, args)
    if callable(method):
        return await call_user(method, sender, recipient, args)
    raise ValueError(
        f"If not None, the summary_method must be a string from {SUMMARY_METHODS} or a callable."
    )


class ChatSetup:
    """What a chat takes from its sender's overridable helpers (AutoGen's ``_prepare_chat``,
    and ``_is_silent``'s answer for this chat), as the sender hands them over."""

    __slots__ = ("prepare", "silenced")

    def __init__(self, prepare: Callable[..., None], silenced: bool) -> None:
        self.prepare = prepare
        self.silenced = silenced


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
                    args = dict(
                        summary_args or {}
                    )  # a copy: AutoGen wrote the cache into the caller's dict
                    args.setdefault("cache", cache)
                    with (
                        echo_silenced(bool(silent)),
                        _reports.summary_step(recipient, summary_method) as summary_step,
                    ):
                        summary = await summarize(sender, recipient, summary_method, args)
                        summary_step.end(summary)
                finally:
                    for agent in agents:
                        agent.client_cache = agent.previous_cache
                        agent.previous_cache = None
                usage = Usage(run.all_calls())
                result = ChatResult(
                    chat_history=as_dicts(list(sender.state.messages[recipient])),
                    summary=summary,
                    cost=usage.to_autogen(),
                    human_input=list(sender.state.human_input),
                    termination_reason=reason,
                    usage=usage,
                    run_id=run.id,
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
