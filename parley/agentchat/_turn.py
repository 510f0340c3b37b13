"""One agent's turn, top to bottom: the steps of ``ConversableAgent.a_send``, ``a_receive`` and
``a_generate_reply``, and the reports (``parley._core.reports``) a logger or tracer receives of them.

1. :func:`send`: the ``process_message_before_send`` hooks, the message check (once, so the
   recipient gets what the sender stored), storing it as sent, delivering it (``_delivery``).
2. :func:`receive`: storing the message as received and printing it (a ``received_message``
   report), then, when a reply is wanted, the recipient's ``generate_reply`` and the reply
   handed back for sending (``_delivery.send_reply``, which queues it: no recursion).
3. :func:`reply`: the budget check, then a ``turn`` report around the walk: the received
   messages through the agent's hooks, then each reply function whose trigger matches the
   sender, in order (a ``reply_func`` report each), until one answers as final; without one,
   the default auto-reply. A chat whose budget is spent gets no turn (``None``); a model
   request refused inside the turn (``BudgetExceededError``) ends the turn unanswered, so the
   chat ends between whole messages (see ``parley.usage``).

What a turn walks and AutoGen's helpers that a subclass overrides (``_append_oai_message``,
``_process_received_message``, ``_is_silent``, ``_match_trigger``) the agent hands over as a
:class:`TurnSetup`; a helper goes in only when the agent's class overrides it (decided once per
class by ``_overrides``), and the turn then takes AutoGen's chain through it (in a worker
thread: such overrides are user code that may block), so only such classes pay for it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._agent_protocol import Agent
from .._core import reports as _reports
from .._core.runtime import to_thread
from ..exceptions import BudgetExceededError
from ..oai._streaming import echo_silenced
from ..types import Message
from ..usage import _run as _usage
from . import _delivery
from ._agent_configs import LLMConfigView
from ._delivery import no_driver
from ._messages import check_message, nothing_to_store, render_message
from ._sync_chat import in_sync_chat

if TYPE_CHECKING:
    from ._registry import HookLists, ReplyEntry
    from ._state import AgentCore

__all__ = ["TurnSetup", "is_silent", "receive", "render", "reply", "send"]


@dataclass(frozen=True, slots=True)
class TurnSetup:
    """What a turn takes from the agent: its reply functions, its hooks, the trigger test, the
    default auto-reply, its silence rule, and AutoGen's storing helpers when its class
    overrides them (else None: the turn stores inline)."""

    replies: Sequence[ReplyEntry]
    hooks: HookLists
    match: Callable[[Any, Any], bool]
    default: Any
    is_silent: Callable[[Any, bool | None], bool]
    append: Callable[[Any, str, Any, bool], bool] | None = None
    process_received: Callable[[Any, Any, Any], None] | None = None
    before_reply: Callable[[list[Message]], Awaitable[list[Message]]] | None = None


# -- 1. send ----------------------------------------------------------------------------------


async def send(
    agent: AgentCore,
    setup: TurnSetup,
    message: dict[str, Any] | str,
    recipient: Agent,
    request_reply: bool | None,
    silent: bool | None,
) -> None:
    """Store ``message`` as sent to ``recipient`` and deliver it."""
    if setup.hooks.at("process_message_before_send"):
        with no_driver():
            message = await setup.hooks.run(
                "process_message_before_send",
                sender=agent,
                message=message,
                recipient=recipient,
                silent=setup.is_silent(agent, silent),
            )
    # Checked once here, so that a message no request could carry is refused before either
    # side stores it, and a repaired one is what the recipient gets (one warning, not two).
    partner = getattr(recipient, "name", "")
    checked = check_message(message, sending=True, own_name=agent.name, partner_name=partner)
    if setup.append is not None:
        await to_thread(_append_sent, agent, setup.append, checked, recipient)
    elif (
        agent.state.store(recipient, checked, sending=True, own_name=agent.name, checked=True)
        is None
    ):
        nothing_to_store(True, agent.name, partner, checked)
    await _delivery.receive(recipient, checked, agent, request_reply, silent)


def _append_sent(
    agent: AgentCore, append: Callable[[Any, str, Any, bool], bool], message: Any, recipient: Any
) -> None:
    if not append(message, "assistant", recipient, True):
        nothing_to_store(True, agent.name, getattr(recipient, "name", ""), message)


# -- 2. receive -------------------------------------------------------------------------------


async def receive(
    agent: AgentCore,
    setup: TurnSetup,
    message: dict[str, Any] | str,
    sender: Agent,
    request_reply: bool | None,
    silent: bool | None,
) -> None:
    """Store ``message`` from ``sender``, show it, and answer it if a reply is wanted."""
    if setup.process_received is not None:
        await to_thread(setup.process_received, message, sender, silent)
    else:
        stored = agent.state.store(sender, message, sending=False, own_name=agent.name)
        if stored is None:
            nothing_to_store(False, agent.name, getattr(sender, "name", ""), message)
        if not is_silent(sender, silent):
            from ..io import IOStream

            out = IOStream.get_default()
            # A run's stream drops what is printed (its events say it): no text to make.
            if not getattr(out, "discards_output", False):
                out.print(render(agent, stored, sender), flush=True)
    _reports.received_message(agent, message, sender)
    state = agent.state
    if request_reply is False or (request_reply is None and not state.reply_at_receive[sender]):
        return
    # The reply is printed (when this agent sends it) as this silence says: so is its stream.
    with echo_silenced(setup.is_silent(agent, silent)):
        answer = await _delivery.generate_reply(agent, state.messages[sender], sender)
    if answer is not None:
        await _delivery.send_reply(agent, answer, sender, silent)


def render(agent: Any, message: Mapping[str, Any], sender: Agent, skip_head: bool = False) -> str:
    """The console text of ``message`` received by ``agent`` from ``sender``."""
    allow = LLMConfigView(agent.llm_config).allow_format_str_template
    text = render_message(message, sender.name, agent.name, allow_format=allow)
    return text.split("\n", 2)[2] if skip_head else text


def is_silent(agent: Any, silent: bool | None = False) -> bool:
    """Whether not to print: ``agent.silent`` when it is not None, else ``silent``."""
    own = getattr(agent, "silent", None)
    return bool(own if own is not None else silent)


# -- 3. reply ---------------------------------------------------------------------------------


async def reply(
    agent: AgentCore,
    setup: TurnSetup,
    messages: list[Message],
    sender: Agent | None,
    exclude: Any,
) -> Any:
    """The agent's reply to ``messages`` from ``sender`` (None: no reply)."""
    if _usage.check() is not None:
        return None  # the chat's budget is spent: it ends here, before this turn
    with _usage.reply_scope(agent), _reports.turn_step(agent, messages, sender) as turn:
        try:
            answer = await _walk(agent, setup, messages, sender, exclude)
        except BudgetExceededError:
            answer = None  # a request of this turn was refused: the turn ends, unanswered
        turn.end(answer)
    return answer


async def _walk(
    agent: AgentCore, setup: TurnSetup, messages: list[Message], sender: Agent | None, exclude: Any
) -> Any:
    sync_chat = in_sync_chat()
    match = setup.match
    with no_driver():
        before_reply = setup.before_reply or setup.hooks.before_reply
        messages = await before_reply(messages)
        for entry in list(setup.replies):
            if exclude and any(entry.matches_func(f) for f in exclude):
                continue
            if sync_chat and entry.ignore_async_in_sync_chat and entry.is_async:
                continue
            if not match(entry.trigger, sender):
                continue
            with _reports.reply_func_step(agent, entry.func, sender) as step:
                final, answer = await entry.run(agent, messages, sender)
                step.end(final=final, reply=answer)
            if final:
                return answer
    return setup.default
