"""What ``agent.run(...)`` returns (AG2's ``autogen.io.run_response``): the run's events as they
happen, and its outcome once it has finished.

::

    response = assistant.run(user, message="What is 2 + 3?", max_turns=3)
    for event in response.events:          # typed events (parley.events), in order
        if event.type == "input_request":
            event.content.respond("exit")  # the chat waits for this
    print(response.summary, response.cost)

The chat runs on parley's runner loop (``run``) or as a task of the caller's loop (``a_run``)
while the caller reads events, in a script as in Jupyter. ``process()`` prints every event
and asks the console for the human's answers. The outcome (``summary``, ``messages``,
``cost``, ``last_speaker``) waits for the run to finish when read before: it raises
:class:`~parley.exceptions.RunNotFinishedError` instead when the run waits for an answer
nobody is reading the events to give, and the run's exception when the run failed.
:class:`AsyncRunResponse`'s are awaited (``await response.summary``), as AG2's.

``run_iter`` / ``a_run_iter`` return :class:`RunIterResponse` / :class:`AsyncRunIterResponse`,
iterated directly (``for event in agent.run_iter(...)``); the chat starts at the first
iteration and ``yield_on`` keeps only the kinds wanted (input requests always come). Unlike
AG2's, the chat does not pause between events: they wait in order for the consumer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any
from uuid import UUID, uuid4

from pydantic import BaseModel, Field

from ..events import BaseEvent, ErrorEvent, RunCompletionEvent
from ._run_state import RunState
from .processors import (
    AsyncConsoleEventProcessor,
    AsyncEventProcessorProtocol,
    ConsoleEventProcessor,
    EventProcessorProtocol,
)

__all__ = [
    "AsyncRunIterResponse",
    "AsyncRunResponse",
    "Cost",
    "CostBreakdown",
    "RunIterResponse",
    "RunResponse",
    "Usage",
]


class Usage(BaseModel):
    """One model's share of a run: cost and tokens."""

    cost: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class CostBreakdown(BaseModel):
    """The total cost and each model's usage."""

    total_cost: float = 0.0
    models: dict[str, Usage] = Field(default_factory=dict)

    @classmethod
    def from_raw(cls, data: dict[str, Any]) -> CostBreakdown:
        """From AutoGen's summary dict (``{"total_cost": ..., "<model>": {...}}``)."""
        models = {k: Usage.model_validate(v) for k, v in data.items() if isinstance(v, dict)}
        return cls(total_cost=float(data.get("total_cost") or 0.0), models=models)


class Cost(BaseModel):
    """A run's cost, with and without the replies served from the cache."""

    usage_including_cached_inference: CostBreakdown
    usage_excluding_cached_inference: CostBreakdown

    @classmethod
    def from_raw(cls, data: dict[str, Any]) -> Cost:
        """From ``ChatResult.cost``."""
        return cls(
            usage_including_cached_inference=CostBreakdown.from_raw(
                data.get("usage_including_cached_inference") or {}
            ),
            usage_excluding_cached_inference=CostBreakdown.from_raw(
                data.get("usage_excluding_cached_inference") or {}
            ),
        )


def _raise_failure(event: ErrorEvent) -> None:
    error = event.content.exception
    if error is not None:
        raise error
    raise RuntimeError(f"{event.content.error_type}: {event.content.error}")


class _Outcome:
    """The results both response kinds read once the run has finished."""

    def __init__(self, state: RunState, agents: Sequence[Any]) -> None:
        self._state = state
        self.agents = list(agents)
        self._uuid = uuid4()

    @property
    def uuid(self) -> UUID:
        """This run's id."""
        return self._uuid

    @property
    def above_run(self) -> None:
        """The run this one is part of (AG2's field; always None here)."""
        return None

    def cancel(self) -> None:
        """Stop the run (parley's own): its chat is cancelled, its events end with an error."""
        self._state.cancel()

    def _begin(self) -> None:
        """Start the run if it waits for its first iteration (the ``run_iter`` kinds)."""

    def _completion(self) -> RunCompletionEvent:
        self._begin()
        self._state.wait()
        if self._state.error is not None:
            raise self._state.error
        completion = self._state.completion
        assert completion is not None  # done without an error: completed
        return completion

    def _summary(self) -> Any:
        self._completion()
        return self._state.result.summary

    def _messages(self) -> list[dict[str, Any]]:
        self._completion()
        return list(self._state.result.chat_history or [])

    def _cost(self) -> Cost | None:
        self._completion()
        cost = self._state.result.cost
        return None if cost is None else Cost.from_raw(cost)

    def _last_speaker(self) -> str | None:
        return self._completion().content.last_speaker

    def _chat_result(self) -> Any:
        self._completion()
        return self._state.result

    def _events(self) -> Iterator[BaseEvent]:
        channel = self._state.channel
        while not (self._state.done and not len(channel)):
            event = channel.get()
            yield event
            if isinstance(event, ErrorEvent):
                _raise_failure(event)
            if isinstance(event, RunCompletionEvent):
                return

    async def _a_events(self) -> AsyncIterator[BaseEvent]:
        channel = self._state.channel
        while not (self._state.done and not len(channel)):
            event = await channel.a_get()
            yield event
            if isinstance(event, ErrorEvent):
                _raise_failure(event)
            if isinstance(event, RunCompletionEvent):
                return


class RunResponse(_Outcome):
    """A run started by ``agent.run(...)``: its events, then its outcome."""

    @property
    def events(self) -> Iterator[BaseEvent]:
        """The run's events, in order, until its ``run_completion`` (or its ``error``: the
        exception is raised after it). The chat waits at each ``input_request`` until it is
        answered."""
        return self._events()

    @property
    def summary(self) -> Any:
        return self._summary()

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat's history (the initiator's side)."""
        return self._messages()

    @property
    def cost(self) -> Cost | None:
        return self._cost()

    @property
    def last_speaker(self) -> str | None:
        return self._last_speaker()

    @property
    def context_variables(self) -> None:
        """AG2's shared context (parley has none: None)."""
        return None

    @property
    def chat_result(self) -> Any:
        """The run's ``ChatResult`` (parley's own: termination reason, usage, parsed reply)."""
        return self._chat_result()

    def process(self, processor: EventProcessorProtocol | None = None) -> None:
        """Hand every event to ``processor`` (default: print it, ask the console for input)."""
        (processor or ConsoleEventProcessor()).process(self)


class AsyncRunResponse(_Outcome):
    """A run started by ``await agent.a_run(...)``: its events (``async for``), then its
    outcome (awaited)."""

    @property
    def events(self) -> AsyncIterator[BaseEvent]:
        """The run's events (see :attr:`RunResponse.events`), for ``async for``."""
        return self._a_events()

    async def _wait(self, read: Callable[[], Any]) -> Any:
        self._begin()
        if not self._state.done:
            await asyncio.to_thread(self._state.wait)
        return read()

    @property
    async def summary(self) -> Any:
        return await self._wait(self._summary)

    @property
    async def messages(self) -> list[dict[str, Any]]:
        return await self._wait(self._messages)  # type: ignore[no-any-return]

    @property
    async def cost(self) -> Cost | None:
        return await self._wait(self._cost)  # type: ignore[no-any-return]

    @property
    async def last_speaker(self) -> str | None:
        return await self._wait(self._last_speaker)  # type: ignore[no-any-return]

    @property
    async def context_variables(self) -> None:
        return None

    @property
    async def chat_result(self) -> Any:
        return await self._wait(self._chat_result)

    async def process(self, processor: AsyncEventProcessorProtocol | None = None) -> None:
        await (processor or AsyncConsoleEventProcessor()).process(self)


def _wanted(event: BaseEvent, yield_on: tuple[type[BaseEvent], ...] | None) -> bool:
    from ..events import InputRequestEvent

    return yield_on is None or isinstance(event, (InputRequestEvent, *yield_on))


class RunIterResponse(RunResponse):
    """``agent.run_iter(...)``: iterate it for the run's events (those of ``yield_on`` and the
    input requests); the chat starts at the first iteration."""

    def __init__(
        self,
        state: RunState,
        agents: Sequence[Any],
        start: Callable[[], None],
        yield_on: Sequence[type[BaseEvent]] | None = None,
    ) -> None:
        super().__init__(state, agents)
        self._start: Callable[[], None] | None = start
        self._yield_on = tuple(yield_on) if yield_on is not None else None

    def _begin(self) -> None:
        start, self._start = self._start, None
        if start is not None:
            start()

    def __iter__(self) -> Iterator[BaseEvent]:
        self._begin()
        for event in self._events():
            if isinstance(event, RunCompletionEvent):
                return
            if _wanted(event, self._yield_on):
                yield event

    @property
    def events(self) -> Iterator[BaseEvent]:
        return iter(self)


class AsyncRunIterResponse(AsyncRunResponse):
    """``agent.a_run_iter(...)``: ``async for`` over it (see :class:`RunIterResponse`)."""

    def __init__(
        self,
        state: RunState,
        agents: Sequence[Any],
        start: Callable[[], None],
        yield_on: Sequence[type[BaseEvent]] | None = None,
    ) -> None:
        super().__init__(state, agents)
        self._start: Callable[[], None] | None = start
        self._yield_on = tuple(yield_on) if yield_on is not None else None

    def _begin(self) -> None:
        start, self._start = self._start, None
        if start is not None:
            start()

    async def __aiter__(self) -> AsyncIterator[BaseEvent]:
        self._begin()
        async for event in self._a_events():
            if isinstance(event, RunCompletionEvent):
                return
            if _wanted(event, self._yield_on):
                yield event

    @property
    def events(self) -> AsyncIterator[BaseEvent]:
        return self.__aiter__()
