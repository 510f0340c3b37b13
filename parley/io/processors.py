"""What consumes a run's events when ``response.process()`` is called (AG2's
``autogen.io.processors``).

:class:`ConsoleEventProcessor` prints each event as the console shows a chat and asks the
terminal for the human's answers (``getpass`` for a password); :class:`AsyncConsoleEventProcessor`
does the same for an ``AsyncRunResponse``, reading the terminal in a worker thread. Any object
with a ``process(response)`` method can stand in (:class:`EventProcessorProtocol`).
"""

from __future__ import annotations

import asyncio
import getpass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..events import BaseEvent, InputRequestEvent

if TYPE_CHECKING:
    from .run_response import AsyncRunResponse, RunResponse

__all__ = [
    "AsyncConsoleEventProcessor",
    "AsyncEventProcessorProtocol",
    "ConsoleEventProcessor",
    "EventProcessorProtocol",
]


@runtime_checkable
class EventProcessorProtocol(Protocol):
    """Consumes a run: reads its events and answers its input requests."""

    def process(self, response: RunResponse) -> None: ...


@runtime_checkable
class AsyncEventProcessorProtocol(Protocol):
    """Consumes an async run."""

    async def process(self, response: AsyncRunResponse) -> None: ...


def _read(event: InputRequestEvent) -> str:
    prompt = event.content.prompt
    if event.content.password:
        return getpass.getpass(prompt or "Password: ")
    return input(prompt)


class ConsoleEventProcessor:
    """Prints each event; asks the terminal when an agent asks its human."""

    def process(self, response: RunResponse) -> None:
        for event in response.events:
            self.process_event(event)

    def process_event(self, event: BaseEvent) -> None:
        if isinstance(event, InputRequestEvent):
            event.respond(_read(event))
        else:
            event.print()


class AsyncConsoleEventProcessor:
    """:class:`ConsoleEventProcessor` for ``AsyncRunResponse``."""

    async def process(self, response: AsyncRunResponse) -> None:
        async for event in response.events:
            await self.process_event(event)

    async def process_event(self, event: BaseEvent) -> None:
        if isinstance(event, InputRequestEvent):
            await event.a_respond(await asyncio.to_thread(_read, event))
        else:
            event.print()
