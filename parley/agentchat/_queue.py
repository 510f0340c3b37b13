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
- Warnings (a repeated recipient, a missing message) are logged, not ``warnings.warn``-ed:
  Python shows a warning once per place in the code, so a program running many queues would
  hear of the first only, and under ``-W error`` a legitimate queue would fail. AutoGen's own
  helpers in ``parley.agentchat.chat`` (``_validate_recipients``...) still warn.
- Agent names the model would refuse are checked for every chat of the queue before the first
  one starts (``_chat_flow.check_names``), so a bad name in the third chat does not cost the
  requests of the first two.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, cast

from .._agent_protocol import Agent
from .._core import journal as _journal
from . import _delivery
from ._chat_flow import carryover_text, check_names
from ._journaled import durable_queue
from .utils import consolidate_chat_info

if TYPE_CHECKING:
    from ._chat_result import ChatResult

__all__ = [
    "REPEATED_RECIPIENTS",
    "Prerequisite",
    "QueuedChat",
    "chat_order",
    "has_repeated_recipients",
    "missing_message",
    "prepare",
    "prerequisite_pairs",
    "print_header",
    "run_concurrent",
    "run_sequential",
]

logger = logging.getLogger(__name__)

# A chat's ``chat_id``: AutoGen's are ints, any hashable value works here.
K = TypeVar("K", bound=Hashable)


class _Chat(TypedDict):
    sender: Agent  # the queue's caller when the entry names none
    recipient: Agent


class QueuedChat(_Chat, total=False):
    """One chat of a queue, as :func:`prepare` checked and copied it: ``initiate_chat``'s
    keywords. The keys read here are typed; an entry may hold any other keyword
    ``initiate_chat`` takes (``clear_history``, ``max_turns``, ``summary_args``, a durable
    store's...), passed on as it is."""

    message: Any  # a str, a message dict, or a callable that makes the first message
    summary_method: Any  # "last_msg", "reflection_with_llm" or a callable
    carryover: str | list[Any]  # the entry's own, then the earlier chats' summaries
    silent: bool | None
    verbose: bool  # print the message and carryover in the banner
    chat_id: Any  # a_initiate_chats: the chat's id (AutoGen's are ints; any hashable works)
    prerequisites: list[int]  # a_initiate_chats: the chats that must finish first
    finished_chat_indexes_to_exclude_from_carryover: list[int]  # queue positions


def prepare(chat_queue: Any, sender: Any = None) -> list[QueuedChat]:
    """Validated copies of the queue's entries; ``sender`` fills the entries without one."""
    if isinstance(chat_queue, Mapping):
        chat_queue = [chat_queue]
    if not isinstance(chat_queue, Sequence) or isinstance(chat_queue, str):
        raise TypeError(f"chat_queue must be a list of dicts, got {type(chat_queue).__name__}")
    entries: list[QueuedChat] = []
    for i, given in enumerate(chat_queue):
        if not isinstance(given, Mapping):
            raise TypeError(
                f"chat_queue[{i}] must be a dict of initiate_chat arguments, got "
                f"{type(given).__name__}"
            )
        copy = dict(given)
        if sender is not None and copy.get("sender") is None:
            copy["sender"] = sender
        consolidate_chat_info(copy)  # sender and recipient are there from here on
        entry = cast("QueuedChat", copy)
        check_names(entry["sender"], entry["recipient"], entry.get("summary_method", "last_msg"))
        if "message" not in entry:
            logger.warning(missing_message(f"chat_queue[{i}]"))
        entries.append(entry)
    if has_repeated_recipients(entries):
        logger.warning(REPEATED_RECIPIENTS)
    return entries


REPEATED_RECIPIENTS = (
    "Repetitive recipients detected: the chat history is cleared by default when a "
    "recipient appears more than once. To keep it, set 'clear_history=False' in the "
    "entries of the repeating agent."
)


def missing_message(where: str) -> str:
    return f"message is not provided in {where}: the human will be asked for the initial message."


def has_repeated_recipients(chat_queue: Sequence[Mapping[str, Any]]) -> bool:
    """Whether some recipient (the same object) has more than one chat in the queue."""
    recipients = set()
    for entry in chat_queue:
        recipient = entry.get("recipient")
        if recipient is None:
            raise AssertionError("recipient must be provided.")
        recipients.add(id(recipient))
    return len(recipients) < len(chat_queue)


def _own_carryover(entry: QueuedChat) -> list[Any]:
    carryover = entry.get("carryover") or []
    return [carryover] if isinstance(carryover, str) else list(carryover)


def print_header(entry: Mapping[str, Any]) -> None:
    """The "Starting a new chat...." banner; with ``verbose``, the message and carryover."""
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


async def _run_one(entry: QueuedChat, position: int) -> ChatResult:
    if not entry.get("silent"):
        print_header(entry)
    with _journal.lane(f"{position}:"):  # in a durable queue, each chat keys its own steps
        # A subclass that overrides only the sync initiate_chat is honoured (see _delivery).
        result: ChatResult = await _delivery.initiate_chat(entry["sender"], **entry)
    return result


async def run_sequential(
    chat_queue: Any, sender: Any = None, *, store: Any = None, chat_id: Any = None
) -> list[ChatResult]:
    """Run the chats in order; each gets the summaries of the earlier ones as carryover.
    With ``store`` the queue is durable chat ``chat_id`` (``parley.durable``)."""
    entries = prepare(chat_queue, sender)
    finished: list[ChatResult] = []
    async with durable_queue(store, chat_id, entries, "sequential"):
        for position, entry in enumerate(entries):
            exclude = entry.get("finished_chat_indexes_to_exclude_from_carryover") or ()
            entry["carryover"] = _own_carryover(entry) + [
                r.summary for i, r in enumerate(finished) if i not in exclude
            ]
            finished.append(await _run_one(entry, position))
    return finished


Prerequisite = tuple[int, int]  # (chat id, id of a chat that must finish before it)


def prerequisite_pairs(chat_queue: Sequence[Mapping[str, Any]]) -> list[Prerequisite]:
    """The queue's ``(chat_id, prerequisite_id)`` pairs, after checking that every chat has an
    id and every prerequisite is an int."""
    pairs = []
    for i, entry in enumerate(chat_queue):
        chat_id = entry.get("chat_id")
        if chat_id is None:
            raise ValueError(
                "Each chat must have a unique id for async multi-chat execution. "
                f"chat_queue[{i}] has no 'chat_id'."
            )
        for pre in entry.get("prerequisites") or ():
            if not isinstance(pre, int):
                raise ValueError(
                    f"Prerequisite chat id is not int. Chat {chat_id!r} has the prerequisite "
                    f"{pre!r}."
                )
            pairs.append((chat_id, pre))
    return pairs


def _layers(chat_ids: Iterable[K], prerequisites: Iterable[tuple[K, K]]) -> tuple[list[K], list[K]]:
    """Kahn's topological order, layer by layer: first the chats without prerequisites (in
    ``chat_ids`` order), then those whose prerequisites are all in earlier layers, and so on.
    Returns the order and the chats that can never start (in a cycle, after one, or waiting
    for an unknown id)."""
    waiting_on: dict[K, set[K]] = {chat: set() for chat in chat_ids}
    followers: dict[K, list[K]] = {}
    for chat, pre in prerequisites:
        pending = waiting_on.setdefault(chat, set())
        if pre not in pending:
            pending.add(pre)
            followers.setdefault(pre, []).append(chat)
    layer = [chat for chat, pending in waiting_on.items() if not pending]
    order: list[K] = []
    while layer:
        order += layer
        following = []
        for done in layer:
            for chat in followers.pop(done, ()):
                waiting_on[chat].discard(done)
                if not waiting_on[chat]:
                    following.append(chat)
        layer = following
    started = set(order)
    return order, [chat for chat in waiting_on if chat not in started]


def chat_order(chat_ids: Iterable[K], prerequisites: Iterable[tuple[K, K]]) -> list[K]:
    """The chats in an order that runs every chat after its prerequisites (breadth-first
    layers); ``[]`` when some chat can never start."""
    order, stuck = _layers(chat_ids, prerequisites)
    return [] if stuck else order


def _check_ids(entries: list[QueuedChat]) -> dict[Hashable, int]:
    """chat id -> queue index, after checking ids and prerequisites (no cycles)."""
    pairs = prerequisite_pairs(entries)
    index: dict[Hashable, int] = {}
    for i, entry in enumerate(entries):
        chat_id = entry["chat_id"]
        if chat_id in index:
            raise ValueError(
                f"Each chat must have a unique id for async multi-chat execution: chat_id "
                f"{chat_id!r} is used by chat_queue[{index[chat_id]}] and chat_queue[{i}]."
            )
        index[chat_id] = i
    for chat_id, pre in pairs:
        if pre not in index:
            raise ValueError(
                f"chat {chat_id!r} has the prerequisite {pre!r}, which is not the "
                f"chat_id of any chat in the queue ({list(index)})."
            )
    _, stuck = _layers(index, pairs)
    if stuck:
        # Every stuck chat waits for another stuck one: follow them until one comes back.
        path = [stuck[0]]
        while True:
            prerequisites = entries[index[path[-1]]].get("prerequisites") or ()
            nxt = next(pre for pre in prerequisites if pre in stuck)
            if nxt in path:
                cycle = " -> ".join(map(repr, [*path[path.index(nxt) :], nxt]))
                raise ValueError(f"the chat prerequisites form a cycle: {cycle}")
            path.append(nxt)
    return index


async def run_concurrent(
    chat_queue: Any, sender: Any = None, *, store: Any = None, chat_id: Any = None
) -> dict[Hashable, ChatResult]:
    """Run every chat as soon as its prerequisites have finished; ``{chat_id: result}``.
    With ``store`` the queue is durable chat ``chat_id`` (``parley.durable``)."""
    entries = prepare(chat_queue, sender)
    index = _check_ids(entries)
    async with durable_queue(store, chat_id, entries, "concurrent"):
        return await _run_concurrent(entries, index)


async def _run_concurrent(
    entries: list[QueuedChat], index: dict[Hashable, int]
) -> dict[Hashable, ChatResult]:
    tasks: dict[Hashable, asyncio.Task[ChatResult]] = {}

    async def run(entry: QueuedChat) -> ChatResult:
        prerequisites = list(entry.get("prerequisites") or ())
        results = [await tasks[pre] for pre in prerequisites]
        exclude = entry.get("finished_chat_indexes_to_exclude_from_carryover") or ()
        entry["carryover"] = _own_carryover(entry) + [
            r.summary
            for pre, r in zip(prerequisites, results, strict=True)
            if index[pre] not in exclude
        ]
        result = await _run_one(entry, index[entry["chat_id"]])
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
