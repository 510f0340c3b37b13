"""Chat queues: several chats in a row (``initiate_chats``) or by prerequisites, concurrently
(``a_initiate_chats``), each one's summary carried into the chats after it.

Differences from AutoGen, on purpose:

- The caller's queue dicts are never modified: each entry is copied before ``sender`` and
  ``carryover`` are filled in (AutoGen wrote them back, so running a queue twice doubled the
  carryover).
- ``finished_chat_indexes_to_exclude_from_carryover`` means **positions in the queue** (0 is
  the first entry) in both runners, as its name says. AutoGen's async runner compared chat
  ids instead.
- In the async runner each chat starts as soon as its own prerequisites have finished (not
  layer by layer), and a prerequisite cycle, an unknown prerequisite id or a duplicate chat id
  raises ``ValueError`` (AutoGen silently ran nothing and returned ``{}``). If a chat fails,
  the chats still running are cancelled and the error propagates.
- Warnings (a repeated recipient, a missing message) are logged, not ``warnings.warn``-ed.
- Agent names the model would refuse are checked for every chat of the queue before the first
  one starts (``_chat_flow.check_names``), so a bad name in the third chat does not cost the
  requests of the first two.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import _delivery
from ._chat_flow import carryover_text, check_names, check_summary_method

if TYPE_CHECKING:
    from ._chat_result import ChatResult

__all__ = ["prepare", "run_concurrent", "run_sequential"]

logger = logging.getLogger(__name__)

_EXCLUDE = "finished_chat_indexes_to_exclude_from_carryover"


def prepare(chat_queue: Any, sender: Any = None) -> list[dict[str, Any]]:
    """Validated copies of the queue's entries; ``sender`` fills the entries without one."""
    if isinstance(chat_queue, Mapping):
        chat_queue = [chat_queue]
    if not isinstance(chat_queue, Sequence) or isinstance(chat_queue, str):
        raise TypeError(f"chat_queue must be a list of dicts, got {type(chat_queue).__name__}")
    entries = []
    for i, entry in enumerate(chat_queue):
        if not isinstance(entry, Mapping):
            raise TypeError(
                f"chat_queue[{i}] must be a dict of initiate_chat arguments, got "
                f"{type(entry).__name__}"
            )
        entry = dict(entry)
        if sender is not None and entry.get("sender") is None:
            entry["sender"] = sender
        assert entry.get("sender") is not None, "sender must be provided."
        assert entry.get("recipient") is not None, "recipient must be provided."
        method = entry.get("summary_method", "last_msg")
        check_summary_method(method, entry["sender"], entry["recipient"])
        check_names(entry["sender"], entry["recipient"], method)
        if "message" not in entry:
            logger.warning(
                "message is not provided in chat_queue[%d]: the human will be asked for the "
                "initial message.",
                i,
            )
        entries.append(entry)
    recipients = [e["recipient"] for e in entries]
    if len({id(r) for r in recipients}) < len(recipients):
        logger.warning(
            "Repetitive recipients detected: the chat history is cleared by default when a "
            "recipient appears more than once. To keep it, set 'clear_history=False' in the "
            "entries of the repeating agent."
        )
    return entries


def _own_carryover(entry: Mapping[str, Any]) -> list[Any]:
    carryover = entry.get("carryover") or []
    return [carryover] if isinstance(carryover, str) else list(carryover)


def _print_header(entry: Mapping[str, Any]) -> None:
    if entry.get("silent"):
        return
    from ..io import IOStream

    out = IOStream.get_default()
    out.print("\n" + "*" * 80, flush=True, sep="")
    out.print("Starting a new chat....", flush=True)
    if entry.get("verbose"):
        message = entry.get("message")
        if isinstance(message, str):
            shown = message
        elif callable(message):
            shown = "Callable: " + getattr(message, "__name__", repr(message))
        elif isinstance(message, dict):
            shown = "Dict: " + str(message)
        else:
            shown = repr(message)
        out.print("Message:\n" + shown, flush=True)
        out.print("Carryover:\n" + carryover_text(entry.get("carryover") or []), flush=True)
    out.print("\n" + "*" * 80, flush=True, sep="")


async def _run_one(entry: dict[str, Any]) -> ChatResult:
    _print_header(entry)
    # A subclass that overrides only the sync initiate_chat is honoured (see _delivery).
    result: ChatResult = await _delivery.initiate_chat(entry["sender"], **entry)
    return result


async def run_sequential(chat_queue: Any, sender: Any = None) -> list[ChatResult]:
    """Run the chats in order; each gets the summaries of the earlier ones as carryover."""
    entries = prepare(chat_queue, sender)
    finished: list[ChatResult] = []
    for entry in entries:
        exclude = entry.get(_EXCLUDE) or ()
        entry["carryover"] = _own_carryover(entry) + [
            r.summary for i, r in enumerate(finished) if i not in exclude
        ]
        finished.append(await _run_one(entry))
    return finished


def _check_ids(entries: list[dict[str, Any]]) -> dict[Any, int]:
    """chat id -> queue index, after checking ids and prerequisites (no cycles)."""
    index: dict[Any, int] = {}
    for i, entry in enumerate(entries):
        chat_id = entry.get("chat_id")
        if chat_id is None:
            raise ValueError(
                f"Each chat must have a unique id for async multi-chat execution: chat_queue[{i}] "
                "has no 'chat_id'."
            )
        if chat_id in index:
            raise ValueError(
                f"Each chat must have a unique id for async multi-chat execution: chat_id "
                f"{chat_id!r} is used by chat_queue[{index[chat_id]}] and chat_queue[{i}]."
            )
        index[chat_id] = i
    for entry in entries:
        for pre in entry.get("prerequisites") or ():
            if not isinstance(pre, int):
                raise ValueError("prerequisite chat id is not int.")
            if pre not in index:
                raise ValueError(
                    f"chat {entry['chat_id']!r} has the prerequisite {pre!r}, which is not the "
                    f"chat_id of any chat in the queue ({list(index)})."
                )
    state: dict[Any, int] = {}  # 1: being visited, 2: done

    def visit(chat_id: Any, path: list[Any]) -> None:
        if state.get(chat_id) == 2:
            return
        if state.get(chat_id) == 1:
            cycle = " -> ".join(map(repr, [*path[path.index(chat_id) :], chat_id]))
            raise ValueError(f"the chat prerequisites form a cycle: {cycle}")
        state[chat_id] = 1
        for pre in entries[index[chat_id]].get("prerequisites") or ():
            visit(pre, [*path, chat_id])
        state[chat_id] = 2

    for chat_id in index:
        visit(chat_id, [])
    return index


async def run_concurrent(chat_queue: Any, sender: Any = None) -> dict[Any, ChatResult]:
    """Run every chat as soon as its prerequisites have finished; ``{chat_id: result}``."""
    entries = prepare(chat_queue, sender)
    index = _check_ids(entries)
    tasks: dict[Any, asyncio.Task[ChatResult]] = {}

    async def run(entry: dict[str, Any]) -> ChatResult:
        prerequisites = list(entry.get("prerequisites") or ())
        results = [await tasks[pre] for pre in prerequisites]
        exclude = entry.get(_EXCLUDE) or ()
        entry["carryover"] = _own_carryover(entry) + [
            r.summary
            for pre, r in zip(prerequisites, results, strict=True)
            if index[pre] not in exclude
        ]
        result = await _run_one(entry)
        result.chat_id = entry["chat_id"]
        return result

    for entry in entries:
        tasks[entry["chat_id"]] = asyncio.ensure_future(run(entry))
    try:
        await asyncio.gather(*tasks.values())
    except BaseException:
        for task in tasks.values():
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        raise
    return {chat_id: task.result() for chat_id, task in tasks.items()}
