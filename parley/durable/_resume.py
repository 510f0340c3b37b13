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
    sender: Any = None,
    recipient: Any = None,
    chat_queue: list[dict[str, Any]] | None = None,
    on_uncertain_tool: UncertainPolicy | None = None,
    **chat: Any,
) -> Any:
    """Continue durable chat ``chat_id`` of ``store`` and return what the chat returns.

    A chat started by ``initiate_chat``: give its ``sender`` and ``recipient`` (a group
    chat's manager), rebuilt; its ``ChatResult`` comes back. A queue started by
    ``initiate_chats(chat_queue, store=, chat_id=)``: give ``chat_queue`` (rebuilt, and
    ``sender`` if the agent's ``initiate_chats`` method ran it); its results come back.

    ``on_uncertain_tool(call)`` decides for a non-idempotent tool that was running when the
    chat stopped: ``"rerun"``, ``"skip"`` (its result says it was not run again) or a text to
    use as its result; without it such a call raises ``UncertainToolCallError``. ``chat``
    gives what the journal could not keep (a callable ``message`` or ``summary_method``) and
    ``initiate_chat``'s other keywords (``cache``, ...).
    """
    header = await store.a_header(chat_id)
    if header is None:
        raise DurableChatError(f"no chat {chat_id!r} in {store.location}")
    token = resuming.set(Resuming(chat_id, on_uncertain_tool))
    try:
        if "queue" in header:
            return await _resume_queue(chat_id, store, header, sender, chat_queue)
        if recipient is None or sender is None or chat_queue is not None:
            raise DurableChatError(
                f"chat {chat_id!r} was started by initiate_chat: resume it with sender= and "
                "recipient="
            )
        args = {k: header.get(k) for k in _CHAT_ARGS}
        missing = [k for k in header.get("callables", ()) if k not in chat]
        if missing:
            raise DurableChatError(
                f"chat {chat_id!r} was started with a callable {', '.join(missing)}: pass it "
                "to resume again"
            )
        args.update(chat)
        return await sender.a_initiate_chat(recipient, store=store, chat_id=chat_id, **args)
    finally:
        resuming.reset(token)


async def _resume_queue(
    chat_id: str, store: Any, header: dict[str, Any], sender: Any, chat_queue: Any
) -> Any:
    if chat_queue is None:
        raise DurableChatError(
            f"chat {chat_id!r} is a chat queue (initiate_chats): resume it with chat_queue="
        )
    from ..agentchat import _queue

    runner = (
        _queue.run_concurrent if header.get("runner") == "concurrent" else _queue.run_sequential
    )
    return await runner(chat_queue, sender, store=store, chat_id=chat_id)


resume = sync_of(a_resume, "resume")
"""The blocking form of :func:`a_resume`."""
