"""The asyncio engine both backends run: chats from a list, a bounded number at a time, each
tried again on a retryable failure, all under one ledger (the batch's budget and usage).

The local backend runs one engine in the caller's process; on Ray each worker (an actor)
runs one engine on its own event loop, fed chunk after chunk by the driver.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from .._core.calls import is_async_callable
from .._core.runtime import CancelToken, resource_shard, run_under
from ..io.base import IOStream
from ..usage import Budget
from ..usage import _run as _usage
from ._item import BatchItem
from ._result import ChatError
from ._retry import RetryOn, backoff, retryable

__all__ = ["Engine", "Finished", "Outcome", "Settings", "Todo"]

# Chats sharing one connection pool per model (see parley._core.runtime.resource_shard).
_CHATS_PER_POOL = 50


@dataclass(frozen=True)
class Todo:
    """One chat to run: its input and where it stands in the batch."""

    index: int
    input: Any
    chat_id: str | None = None


@dataclass
class Outcome:
    """How one chat ended: a result, an error, or not started (the batch's budget)."""

    index: int
    result: Any = None
    error: ChatError | None = None
    not_run: bool = False
    attempts: int = 0


@dataclass
class Finished:
    """What a backend brings back: each chat's outcome by index, the batch's model calls, the
    budget reason that stopped it, chats finished per worker, and how many chats of a durable
    batch its factory ran around the item (not durable)."""

    outcomes: dict[int, Outcome] = field(default_factory=dict)
    calls: list[_usage.LLMCall] = field(default_factory=list)
    stop_reason: str | None = None
    workers: dict[str, int] = field(default_factory=dict)
    unused: int = 0


@dataclass(frozen=True)
class Settings:
    """How the engine treats each chat (the same in every process of a batch)."""

    retries: int = 2
    retry_on: RetryOn = ()
    quiet: bool = True
    # "always" keeps each exception object in its ChatError; "picklable" keeps only those
    # that can travel back to the driver of a Ray batch.
    keep_errors: str = "always"


@dataclass(frozen=True)
class Work:
    """What a batch runs, on whichever backend: the chats to do, the factory that runs one,
    the store of a durable batch, the settings, the concurrency and the batch's budget."""

    todos: list[Todo]
    factory: Callable[..., Any]
    store: Any
    settings: Settings
    concurrency: int
    budget: Budget | None


class _Quiet(IOStream):
    """The IOStream of a quiet batch's chats: what they print is dropped (thousands of
    interleaved transcripts help nobody); a question for a human still reaches the default
    stream."""

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        return None

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        return IOStream.get_global_default().input(prompt, password=password)


class Engine:
    """Runs chats of one batch with ``factory``; at most ``concurrency`` at once, whichever
    :meth:`run` call they came from (a Ray worker runs several chunks at a time)."""

    def __init__(
        self, factory: Callable[..., Any], store: Any, settings: Settings, concurrency: int
    ) -> None:
        self.factory = factory
        self.store = store
        self.settings = settings
        self.concurrency = concurrency
        self._slots = asyncio.Semaphore(concurrency)
        self._shards = -(-concurrency // _CHATS_PER_POOL)
        self._async = is_async_callable(factory)
        self._threads: ThreadPoolExecutor | None = None
        self.unused = 0  # chats of a durable batch whose factory bypassed the item

    async def run(
        self,
        todos: Iterable[Todo],
        ledger: _usage.ChatRun,
        on_outcome: Callable[[Outcome], None] = lambda outcome: None,
    ) -> list[Outcome]:
        """Run ``todos`` (in order of start) inside ``ledger`` (current in the caller's
        context); each outcome goes to ``on_outcome`` as it comes."""
        queue = deque(todos)
        outcomes: list[Outcome] = []

        async def work() -> None:
            while queue:
                todo = queue.popleft()
                async with self._slots:
                    outcome = await self._one(todo, ledger)
                outcomes.append(outcome)
                on_outcome(outcome)

        tasks = [asyncio.ensure_future(work()) for _ in range(min(len(queue), self.concurrency))]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return outcomes

    def close(self) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
            self._threads = None

    async def _one(self, todo: Todo, ledger: _usage.ChatRun) -> Outcome:
        settings = self.settings
        attempt = 0
        while True:
            attempt += 1
            if attempt == 1 and _usage.check(ledger) is not None:
                return Outcome(todo.index, not_run=True)
            item = BatchItem(todo.index, todo.input, todo.chat_id, self.store, attempt)
            try:
                result = await self._call(item)
            except Exception as error:
                retry = retryable(settings.retry_on, error)
                if retry and attempt <= settings.retries and _usage.check(ledger) is None:
                    await asyncio.sleep(backoff(attempt))
                    continue
                failure = ChatError.of(
                    todo.index, todo.chat_id, error, attempt, retry, keep=settings.keep_errors
                )
                return Outcome(todo.index, error=failure, attempts=attempt)
            if self.store is not None and not item.used:
                self.unused += 1
            return Outcome(todo.index, result=result, attempts=attempt)

    async def _call(self, item: BatchItem[Any]) -> Any:
        quiet = IOStream.set_default(_Quiet()) if self.settings.quiet else nullcontext()
        with quiet, resource_shard(item.index % self._shards):
            if self._async:
                return await self.factory(item)
            result = await self._in_thread(item)
            if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
                result = await result
            return result

    async def _in_thread(self, item: BatchItem[Any]) -> Any:
        """A sync factory's call in a thread of the engine's own pool (the loop's default
        pool has a handful of threads: it would bound the batch, not ``concurrency``).
        Cancelling the chat cancels the token, which stops a sync ``initiate_chat`` in it."""
        if self._threads is None:
            self._threads = ThreadPoolExecutor(self.concurrency, thread_name_prefix="parley-batch")
        token = CancelToken()
        context = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(
            self._threads, context.run, run_under, token, self.factory, item
        )
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            token.cancel()
            raise
