"""The steps of a turn a durable chat records and replays (see :mod:`parley._core.journal`): a
tool call, a code execution, a human's answer.

A tool's start is committed before it runs, so a resumed chat knows a call that was running
when the process died; an idempotent tool (the default) simply runs again, one registered
with ``idempotent=False`` is put to the journal's ``on_uncertain_tool`` policy.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, cast

from .._core import journal as _journal
from ..exceptions import ChatPaused

if TYPE_CHECKING:
    from ..types import Message
    from ._queue import QueuedChat
    from ._state import AgentCore

__all__ = [
    "durable_queue",
    "journaled_code",
    "journaled_human",
    "journaled_tool",
    "mark_idempotent",
    "open_journal",
]

ToolRun = Callable[[], Awaitable["tuple[bool, Message]"]]


def _skipped(name: str) -> Callable[[str], tuple[bool, Message]]:
    def settle(choice: str) -> tuple[bool, Message]:
        if choice == _journal.SKIP:
            text = (
                f"Error: the call of {name} was interrupted and not run again: "
                "whether it took effect is unknown."
            )
            return False, {"name": name, "role": "function", "content": text}
        return True, {"name": name, "role": "function", "content": choice}

    return settle


def mark_idempotent(func: Callable[..., Any], idempotent: bool) -> None:
    """Say whether ``func``, as it sits in an agent's function map, may simply run again when
    a resumed durable chat finds its call unfinished (an unmarked function counts as
    idempotent)."""
    func._parley_idempotent = idempotent  # type: ignore[attr-defined]


def _idempotent(func: Any) -> bool:
    return bool(getattr(func, "_parley_idempotent", True))


async def journaled_tool(
    agent: str, func: Any, name: str, call_id: str | None, arguments: Any, run: ToolRun
) -> tuple[bool, Message]:
    """``run()``'s ``(success, reply)`` for one tool call, or its recorded one."""
    if _journal.current() is None:
        return await run()
    idempotent = _idempotent(func)
    uncertain = None
    if not idempotent:
        uncertain = _journal.UncertainCall("tool", agent, name, call_id, _journal.plain(arguments))
    result = await _journal.journaled(
        "tool",
        agent,
        run,
        ident=call_id or name,
        encode=list,
        decode=_tool_result,
        start={"tool": name, "call_id": call_id, "arguments": _journal.plain(arguments)},
        uncertain=uncertain,
        settle=_skipped(name),
    )
    return result


async def journaled_code(
    agent: str, run: Callable[[], Awaitable[tuple[int, str]]]
) -> tuple[int, str]:
    """``run()``'s ``(exit_code, output)`` for one code execution, or its recorded one."""
    return await _journal.journaled("code", agent, run, encode=list, decode=_code_result)


# What a step replays is checked for its shape (records this host signed may still come from
# a buggy or older version): ``journaled`` turns these errors into JournalIntegrityError.
def _tool_result(record: Any) -> tuple[bool, Message]:
    if not (isinstance(record, list) and len(record) == 2):
        raise TypeError(f"a tool result is [success, reply], got {type(record).__name__}")
    success, reply = record
    if not isinstance(success, bool) or not isinstance(reply, dict):
        raise TypeError("a tool result is [bool, {reply}]")
    if not isinstance(reply.get("content"), (str, type(None), list)):
        raise TypeError(
            f"a tool reply's content is text, got {type(reply.get('content')).__name__}"
        )
    # Its shape checked above: from here on a message like the one the tool's run returned.
    return success, cast("Message", dict(reply))


def _code_result(record: Any) -> tuple[int, str]:
    if not (isinstance(record, list) and len(record) == 2):
        raise TypeError(f"a code result is [exit code, output], got {type(record).__name__}")
    code, output = record
    if type(code) is not int or not isinstance(output, str):
        raise TypeError("a code result is [int, str]")
    return code, output


def _human_answer(record: Any) -> str:
    if not isinstance(record, str):
        raise TypeError(f"a human's answer is text, got {type(record).__name__}")
    return record


async def journaled_human(
    agent: AgentCore,
    prompt: str,
    ask: Callable[[], Awaitable[str]],
    approval: Mapping[str, Any] | None = None,
) -> str:
    """The human's answer, or the one recorded (kept in the agent's ``human_input`` again, as
    asking would have). The question is committed before it is asked, so a chat that stops
    while it waits (:class:`ChatPaused`, or a dead process) lists it as a pending input;
    ``approval`` (``{"tool_call": {...}}`` or ``{"code_blocks": [...]}``, plain JSON) is
    committed with it, so the pending input says what waits for approval."""
    journal = _journal.current()
    if journal is None:
        return await ask()
    asked = False

    async def asking() -> str:
        nonlocal asked
        asked = True
        try:
            return await ask()
        except ChatPaused as paused:
            paused.chat_id, paused.agent = journal.chat_id, agent.name
            paused.prompt = paused.prompt or prompt
            raise

    text = await _journal.journaled(
        "human",
        agent.name,
        asking,
        start={"agent": agent.name, "prompt": prompt, **(approval or {})},
        decode=_human_answer,
    )
    if not asked:
        agent.state.human_input.append(text)
    return text


async def open_journal(
    kwargs: dict[str, Any], sender: Any, recipient: Any, chat: dict[str, Any]
) -> _journal.Journal | None:
    """The journal of a chat started with ``store=`` (and ``chat_id=``), both taken out of
    ``kwargs``; None for a chat that is not durable (its ``chat_id`` left in ``kwargs``). ``chat`` holds the chat's arguments, the
    ones a resume starts it with again (a callable's as None: resume must be given it)."""
    store = kwargs.pop("store", None)
    if store is None:
        return None  # a chat queue's chat_id (its prerequisites' key) stays in the context
    chat_id = _chat_id(kwargs.pop("chat_id", None))
    if sender.name == getattr(recipient, "name", None):
        raise ValueError(
            f"a durable chat's agents need different names (both are {sender.name!r}): its "
            "journal tells their steps apart by name"
        )
    header = {
        "sender": sender.name,
        "recipient": getattr(recipient, "name", None),
        **{k: None if callable(v) else _journal.plain(v) for k, v in chat.items()},
        "callables": sorted(k for k, v in chat.items() if callable(v)),
    }
    journal: _journal.Journal = await store.open_chat(chat_id, header)
    return journal


def _chat_id(chat_id: Any) -> str:
    if not isinstance(chat_id, str) or not chat_id:
        raise ValueError(
            f"a durable chat (store=) needs a chat_id= string to be resumed by, got {chat_id!r}"
        )
    return chat_id


@asynccontextmanager
async def durable_queue(
    store: Any, chat_id: Any, entries: Sequence[QueuedChat], runner: str
) -> AsyncIterator[None]:
    """Run a chat queue (``initiate_chats``) as one durable chat ``chat_id`` of ``store``: its
    chats record their steps in one journal, each in its own lane (its queue position). Without
    a store, the body runs as it is."""
    if store is None:
        if chat_id is not None:
            raise ValueError("initiate_chats(chat_id=...) names a durable queue: give store= too")
        yield
        return
    header = {
        "queue": [[e["sender"].name, getattr(e["recipient"], "name", None)] for e in entries],
        "runner": runner,
    }
    journal: _journal.Journal = await store.open_chat(_chat_id(chat_id), header)
    try:
        with _journal.scope(journal):
            yield
        await journal.end(None)
    finally:
        await journal.close()
