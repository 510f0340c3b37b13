"""Progress of a served chat: one line per message, from parley's reports.

Listeners are process-wide, so each served chat marks its own context (a context variable the
chat's tasks and worker threads inherit) and the listener only reports messages seen there.
A group chat's manager forwards each speaker's message to the others: only the speaker's
message to the manager is counted, so each message is reported once.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from .._core import events as _events
from .._core.reports import ReceivedMessageEvent
from ..agentchat import GroupChatManager

__all__ = ["watch_messages"]

_PREVIEW = 200  # characters of a message shown in a progress line

_watch: contextvars.ContextVar[_Watch | None] = contextvars.ContextVar(
    "parley_mcp_watch", default=None
)


class _Watch:
    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self.managers: set[str] = set()

    def saw(self, event: ReceivedMessageEvent) -> None:
        # Called on whichever thread made the report (a sync tool's worker thread, say).
        receiver = event.source
        if isinstance(receiver, GroupChatManager):
            self.managers.add(str(receiver.name))
        sender = event.data.get("sender")
        if sender in self.managers:
            return  # the manager passing a speaker's message on
        to = getattr(receiver, "name", receiver)
        line = f"{sender} -> {to}: {_preview(event.data['message'])}"
        self.loop.call_soon_threadsafe(self.lines.put_nowait, line)


class _Listener(_events.Listener):
    def on_event(self, event: _events.Event) -> None:
        watch = _watch.get()
        if watch is not None and isinstance(event, ReceivedMessageEvent):
            watch.saw(event)


_LISTENER = _Listener()
_active = 0


def _preview(message: Any) -> str:
    if isinstance(message, dict):
        calls = message.get("tool_calls") or []
        names = [str((c.get("function") or {}).get("name")) for c in calls if isinstance(c, dict)]
        text = message.get("content")
        if not text and names:
            return "calls " + ", ".join(names)
        message = text
    text = " ".join(str(message or "").split())
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…"


@asynccontextmanager
async def watch_messages(report: Callable[[int, str], Awaitable[None]]) -> AsyncIterator[None]:
    """Within the block, each message of a chat started here is passed to ``report`` (its
    number from 1, a line naming sender, receiver and the start of the message); those left
    when the block ends are reported before it returns."""
    global _active
    watch = _Watch()
    token = _watch.set(watch)
    if _active == 0:
        _events.add_listener(_LISTENER)
    _active += 1

    async def forward() -> None:
        count = 0
        while (line := await watch.lines.get()) is not None:
            count += 1
            await report(count, line)

    forwarding = asyncio.ensure_future(forward())
    try:
        yield
    except BaseException:
        forwarding.cancel()
        await asyncio.wait([forwarding])
        raise
    finally:
        _watch.reset(token)
        _active -= 1
        if _active == 0:
            _events.remove_listener(_LISTENER)
    # The chat ended: the lines already made still go out, in order, then the forwarder ends.
    watch.loop.call_soon(watch.lines.put_nowait, None)
    await forwarding
