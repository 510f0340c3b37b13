"""One agent's turn (``ConversableAgent.a_generate_reply``): the budget check, the reports a
logger or tracer receives, and the walk over the agent's reply functions.

The walk runs the received messages through the agent's hooks, then each reply function whose
trigger matches the sender, in order, until one answers as final; without one, the default
auto-reply. A chat whose budget is spent gets no turn (``None``); a model request refused inside
the turn (``BudgetExceededError``) ends the turn unanswered, so the chat ends between whole
messages (see ``parley.usage``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .. import _events
from ..exceptions import BudgetExceededError
from ..usage import _run as _usage
from ._delivery import no_driver
from ._sync_chat import in_sync_chat

if TYPE_CHECKING:
    from ._registry import HookLists, ReplyEntry

__all__ = ["ReplySetup", "take_turn"]


class ReplySetup:
    """What a turn walks, as the agent hands it over: its reply functions, its hooks, the
    trigger test (AutoGen's ``_match_trigger`` when a subclass overrides it) and the default
    auto-reply."""

    __slots__ = ("default", "hooks", "match", "replies")

    def __init__(
        self,
        replies: Sequence[ReplyEntry],
        hooks: HookLists,
        match: Callable[[Any, Any], bool],
        default: Any,
    ) -> None:
        self.replies = replies
        self.hooks = hooks
        self.match = match
        self.default = default


async def take_turn(
    agent: Any, setup: ReplySetup, messages: list[dict[str, Any]], sender: Any, exclude: Any
) -> Any:
    """The agent's reply to ``messages`` from ``sender`` (None: no reply)."""
    if _usage.check() is not None:
        return None  # the chat's budget is spent: it ends here, before this turn
    with _usage.reply_scope(agent), _turn_step(agent, messages, sender) as turn:
        try:
            reply = await _walk(agent, setup, messages, sender, exclude)
        except BudgetExceededError:
            reply = None  # a request of this turn was refused: the turn ends, unanswered
        turn.set(reply=reply)
    return reply


async def _walk(
    agent: Any, setup: ReplySetup, messages: list[dict[str, Any]], sender: Any, exclude: Any
) -> Any:
    sync_chat = in_sync_chat()
    match = setup.match
    with no_driver():
        messages = await setup.hooks.before_reply(messages)
        for entry in list(setup.replies):
            if exclude and any(entry.matches_func(f) for f in exclude):
                continue
            if sync_chat and entry.ignore_async_in_sync_chat and entry.is_async:
                continue
            if not match(entry.trigger, sender):
                continue
            with _reply_step(agent, entry, sender) as step:
                final, reply = await entry.run(agent, messages, sender)
                step.set(final=final, reply=reply)
            if final:
                return reply
    return setup.default


def _turn_step(agent: Any, messages: list[dict[str, Any]], sender: Any) -> Any:
    if not _events.listening():
        return _events.step("turn", "")
    name = getattr(sender, "name", None)
    return _events.step("turn", agent.name, agent=agent, sender=name, messages=len(messages))


def _reply_step(agent: Any, entry: ReplyEntry, sender: Any) -> Any:
    if not _events.listening():
        return _events.step("reply_func", "")
    func = entry.func
    name = getattr(func, "__name__", type(func).__name__)
    return _events.step(
        "reply_func", name, agent=agent, func=func, sender=getattr(sender, "name", None)
    )
