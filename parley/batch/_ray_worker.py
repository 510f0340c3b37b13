"""The Ray side of a batch: one actor per worker, running chunks of chats on its event loop.

``ChatWorker`` is a plain class; the driver makes it an async actor (``ray.remote``), so this
module imports Ray only inside the worker process, where it runs. Each chunk's chats run in a
ledger of their own (what they spend, for the driver's budget and the batch's usage totals);
every chunk shares the worker's :class:`Engine`, so the worker never runs more than its share
of the batch's ``concurrency``, however many chunks the driver queued on it.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..usage import _run as _usage
from ._engine import Engine, Outcome, Settings, Todo
from ._portable import rebuilt
from ._result import ChatError

__all__ = ["ChatWorker", "ChunkReport", "Spent"]

Spent = tuple[float, int, int]
"""``(cost, tokens, llm_calls)`` spent by chats, cache hits excluded."""


@dataclass
class ChunkReport:
    """A finished chunk: each chat's outcome, pickled one by one (so that one result that does
    not pickle costs its own chat only), the chunk's model calls and what they spent."""

    chunk: int
    outcomes: list[tuple[int, bytes]]
    calls: list[Any]
    spent: Spent
    worker: str
    unused: int


class ChatWorker:
    """A Ray actor that runs chats of one batch (see the module docstring)."""

    def __init__(self, factory: Any, store: Any, settings: Settings, concurrency: int) -> None:
        import ray  # in the worker process, where Ray runs

        self._factory = factory
        self._store = rebuilt(store)
        self._settings = settings
        self._concurrency = concurrency
        self._engine: Engine | None = None
        self._chunks: dict[int, tuple[_usage.Ledger, list[int]]] = {}
        self._stopped: str | None = None
        self._name = f"{ray.get_runtime_context().get_node_id()}/{os.getpid()}"

    async def ready(self) -> str:
        """This worker's name (``<node id>/<pid>``), once it is up."""
        return self._name

    async def run_chunk(self, chunk: int, todos: list[Todo]) -> ChunkReport:
        if self._engine is None:  # made on the actor's loop
            self._engine = Engine(self._factory, self._store, self._settings, self._concurrency)
        engine = self._engine
        done = [0]
        unused_before = engine.unused

        def count(outcome: Outcome) -> None:
            done[0] += 1

        with _usage.ledger(None) as ledger:
            ledger.stop_reason = self._stopped
            self._chunks[chunk] = (ledger, done)
            try:
                outcomes = await engine.run(todos, ledger, count)
            finally:
                del self._chunks[chunk]
        return ChunkReport(
            chunk,
            [(o.index, _pickled(o, self._settings)) for o in outcomes],
            ledger.all_calls(),
            _spent(ledger),
            self._name,
            engine.unused - unused_before,
        )

    async def status(self) -> dict[int, tuple[int, Spent]]:
        """For each chunk still running here: chats done, and what its chats spent so far."""
        return {chunk: (done[0], _spent(ledger)) for chunk, (ledger, done) in self._chunks.items()}

    async def stop(self, reason: str) -> None:
        """The batch's budget is spent: start no more chats, and end the running ones at their
        next step (as a chat's own budget would, ``termination_reason`` = ``reason``)."""
        self._stopped = reason
        for ledger, _ in self._chunks.values():
            ledger.stop_reason = reason


def _spent(ledger: _usage.ChatRun) -> Spent:
    return (ledger.spent.cost, ledger.spent.tokens, ledger.spent.llm_calls)


def _pickled(outcome: Outcome, settings: Settings) -> bytes:
    from ray import cloudpickle  # the serializer Ray itself uses: lambdas, local classes

    dumps: Callable[[Any], bytes] = cloudpickle.dumps
    try:
        return bytes(dumps(outcome))
    except Exception as error:
        failure = ChatError.of(
            outcome.index,
            None,
            TypeError(f"the chat factory's result cannot be sent back from the worker: {error}"),
            outcome.attempts,
            False,
            keep=settings.keep_errors,
        )
        return pickle.dumps(Outcome(outcome.index, error=failure, attempts=outcome.attempts))
