"""Nested chats: a reply function that runs a queue of chats and answers with a summary
(``ConversableAgent.register_nested_chats``).

The default reply function is a coroutine in both modes, so nested chats run on the same
event loop as the outer chat (no thread, no second loop); ``use_async=True`` runs the queue
with ``a_initiate_chats`` semantics (concurrently, by prerequisites), otherwise in order.

``position`` counts as in AutoGen, whose reply list holds each built-in reply twice (an async
and a sync entry): the default 2 means "right after the termination check", before tool and
function-call replies. parley keeps each built-in once; ``register_reply`` counts it twice.

The default reply function is the agent's own ``_summary_from_nested_chats`` (or
``_a_summary_from_nested_chats`` with ``use_async=True``) when its class overrides it, as
AutoGen looked it up on the agent (AG2's ``SwarmAgent`` overrides it).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from .._core.calls import call_user, is_async_callable
from . import _queue
from ._overrides import own
from ._sync_chat import sync_of

if TYPE_CHECKING:
    from .._agent_protocol import Agent
    from ._state import AgentCore, History

__all__ = [
    "a_chats_to_run",
    "a_summary_from_nested_chats",
    "get_chats_to_run",
    "register_nested_chats",
    "summary_from_nested_chats",
    "summary_from_nested_chats_sync",
]

DEFAULT = "summary_from_nested_chats"
Chats = list[dict[str, Any]]  # a chat queue: initiate_chat arguments per chat


async def a_chats_to_run(
    chat_queue: Chats, recipient: AgentCore, messages: History, sender: Agent | None, config: Any
) -> list[dict[str, Any]]:
    """The chats to run for this trigger: copies of the entries, the owner as default sender,
    the trigger's last message as the first chat's default message; a callable message is
    called as ``message(recipient, messages, sender, config)``; chats left without a message
    are dropped."""
    messages = messages or []
    last = messages[-1].get("content") if messages else None
    chats = []
    for i, entry in enumerate(chat_queue):
        chat = dict(entry)
        if chat.get("sender") is None:
            chat["sender"] = recipient
        message = chat.get("message")
        if message is None and i == 0:
            message = last
        if callable(message):
            message = await call_user(message, recipient, messages, sender, config)
        if message:
            chat["message"] = message
            chats.append(chat)
    return chats


def _nested_reply(
    name: str, doc: str, answer: Callable[[Chats], Awaitable[Any]]
) -> Callable[..., Coroutine[Any, Any, tuple[bool, Any]]]:
    """A reply function that runs the trigger's chats and answers with ``answer(chats)``; no
    chat to run: no reply. The two built-ins differ only in how they run the queue."""

    async def reply(
        chat_queue: Chats,
        recipient: AgentCore,
        messages: History = None,
        sender: Agent | None = None,
        config: Any = None,
    ) -> tuple[bool, Any]:
        chats = await a_chats_to_run(chat_queue, recipient, messages, sender, config)
        if not chats:
            return True, None
        return True, await answer(chats)

    # The name is what traces and AutoGen's position rules see.
    reply.__name__ = reply.__qualname__ = name
    reply.__doc__ = doc
    return reply


async def _last_summary(chats: Chats) -> Any:
    return (await _queue.run_sequential(chats))[-1].summary


async def _summary_of_last_id(chats: Chats) -> Any:
    by_id = await _queue.run_concurrent(chats)
    return by_id[chats[-1]["chat_id"]].summary


summary_from_nested_chats = _nested_reply(
    DEFAULT,
    "Run the chats in order; the reply is the last one's summary (no chat: no reply).",
    _last_summary,
)
a_summary_from_nested_chats = _nested_reply(
    "a_summary_from_nested_chats",
    "Run the chats by prerequisites; the reply is the summary of the chat whose id is the "
    "last entry's (no chat: no reply).",
    _summary_of_last_id,
)


get_chats_to_run = sync_of(a_chats_to_run)
summary_from_nested_chats_sync = sync_of(summary_from_nested_chats)


def register_nested_chats(
    agent: AgentCore,
    chat_queue: list[dict[str, Any]],
    trigger: Any,
    reply_func_from_nested_chats: str | Callable[..., Any] = DEFAULT,
    position: int = 2,
    use_async: bool | None = None,
    **kwargs: Any,
) -> None:
    reply_func: Any = reply_func_from_nested_chats
    ignore = kwargs.get("ignore_async_in_sync_chat") if use_async is None else not use_async
    if use_async:
        for chat in chat_queue:
            if chat.get("chat_id") is None:
                raise ValueError("chat_id is required for async nested chats")
        if reply_func == DEFAULT:
            reply_func = (
                own(agent, "_a_summary_from_nested_chats", a_summary_from_nested_chats)
                or a_summary_from_nested_chats
            )
        if not callable(reply_func) or not is_async_callable(reply_func):
            raise ValueError("reply_func_from_nested_chats must be a callable and a coroutine")
    else:
        if reply_func == DEFAULT:
            reply_func = (
                own(agent, "_summary_from_nested_chats", summary_from_nested_chats_sync)
                or summary_from_nested_chats
            )
            ignore = False  # a coroutine here only by parley's choice: it must run in sync chats
        if not callable(reply_func):
            raise ValueError("reply_func_from_nested_chats must be a callable")

    wrapped: Callable[..., Any]
    if is_async_callable(reply_func):

        async def a_wrapped(
            recipient: AgentCore,
            messages: History = None,
            sender: Agent | None = None,
            config: Any = None,
        ) -> Any:
            return await reply_func(chat_queue, recipient, messages, sender, config)

        wrapped = a_wrapped
    else:

        def s_wrapped(
            recipient: AgentCore,
            messages: History = None,
            sender: Agent | None = None,
            config: Any = None,
        ) -> Any:
            return reply_func(chat_queue, recipient, messages, sender, config)

        wrapped = s_wrapped
    functools.update_wrapper(wrapped, reply_func)
    agent.register_reply(
        trigger,
        wrapped,
        position,
        kwargs.get("config"),
        kwargs.get("reset_config"),
        ignore_async_in_sync_chat=bool(ignore),
    )
