"""Resuming a durable chat: the chat is started again with the arguments its journal
recorded, and replays from the journal up to the first step without a recorded result.

The agents are code, not data: the caller passes the same agents its script builds (same
names, tools, prompts and model configs), freshly made. Replay gives them the histories and
counters of the interrupted run (each recorded message is checked: ``ReplayDivergedError``
when they differ), then the chat goes on live to its end.
"""

from __future__ import annotations

from typing import Any

from ..agentchat._sync_chat import sync_of
from ..exceptions import DurableChatError
from ._resuming import Resuming, UncertainPolicy, resuming

__all__ = ["a_resume", "resume"]

_CHAT_ARGS = ("clear_history", "silent", "max_turns", "summary_method", "summary_args", "message")


async def a_resume(
    chat_id: str,
    *,
    store: Any,
    sender: Any,
    recipient: Any,
    on_uncertain_tool: UncertainPolicy | None = None,
    **chat: Any,
) -> Any:
    """Continue durable chat ``chat_id`` of ``store`` between ``sender`` and ``recipient``
    (the agents of ``initiate_chat``, rebuilt) and return its ``ChatResult``.

    ``on_uncertain_tool(call)`` decides for a non-idempotent tool that was running when the
    chat stopped: ``"rerun"``, ``"skip"`` (its result says it was not run again) or a text to
    use as its result; without it such a call raises ``UncertainToolCallError``. ``chat``
    gives what the journal could not keep (a callable ``message`` or ``summary_method``) and
    ``initiate_chat``'s other keywords (``cache``, ...).
    """
    header = await store.header(chat_id)
    if header is None:
        raise DurableChatError(f"no chat {chat_id!r} in the store")
    args = {k: header.get(k) for k in _CHAT_ARGS}
    missing = [k for k in header.get("callables", ()) if k not in chat]
    if missing:
        raise DurableChatError(
            f"chat {chat_id!r} was started with a callable {', '.join(missing)}: pass it to "
            "resume again"
        )
    args.update(chat)
    token = resuming.set(Resuming(chat_id, on_uncertain_tool))
    try:
        return await sender.a_initiate_chat(recipient, store=store, chat_id=chat_id, **args)
    finally:
        resuming.reset(token)


resume = sync_of(a_resume, "resume")
"""The blocking form of :func:`a_resume`."""
