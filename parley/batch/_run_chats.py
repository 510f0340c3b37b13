"""``run_chats``: one chat per input, on this machine or on a Ray cluster."""

from __future__ import annotations

import time
import warnings
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from typing import Any, Literal, TypeVar

from .._core.runtime import run_in_thread
from ..agentchat._sync_chat import sync_of
from ..usage import Budget, Usage
from ..usage import _run as _usage
from ..usage._budget import checked as checked_budget
from ._engine import Engine, Finished, Outcome, Settings, Todo, Work
from ._item import BatchItem
from ._progress import Progress, wanted
from ._ray_backend import RayBackend, run_on_ray
from ._result import BatchResult
from ._retry import RetryOn, is_transient

__all__ = ["a_run_chats", "run_chats"]

I = TypeVar("I")  # noqa: E741
R = TypeVar("R")

Backend = Literal["local", "ray"] | RayBackend


async def a_run_chats(
    chat_factory: Callable[[BatchItem[I]], R | Awaitable[R]],
    inputs: Iterable[I],
    *,
    backend: Backend = "local",
    concurrency: int = 32,
    retries: int = 2,
    retry_on: RetryOn = is_transient,
    store: Any = None,
    batch_id: str | None = None,
    key: Callable[[I], str] | None = None,
    budget: Budget | None = None,
    progress: bool | None = None,
    quiet: bool = True,
) -> BatchResult[R]:
    """Run one chat per input and return their results in input order (see
    ``website/docs/batch.md``).

    ``chat_factory(item)`` runs the chat of ``item.input`` (a :class:`BatchItem`) and returns
    its result: it builds its agents and calls ``await item.a_initiate_chat(sender,
    recipient, ...)`` (any chat: two agents, a group chat's manager, a queue with
    ``item.a_initiate_chats``). Async factories run on the batch's event loop, sync ones in
    threads of their own (``item.initiate_chat``).

    - ``backend``: ``"local"`` (asyncio, in this process), ``"ray"`` or a
      :class:`RayBackend` (workers on a Ray cluster: the factory must pickle, cloudpickle
      takes lambdas and closures, and its modules must be importable there);
    - ``concurrency``: at most this many chats at once, in the whole batch (on Ray split
      evenly across the workers);
    - ``retries``: a chat that failed with an error ``retry_on`` accepts (by default
      :func:`is_transient`: unreachable or overloaded model) runs again, up to this many
      more times, after a short pause; other errors fail the chat at once. Either way a
      failed chat is in ``BatchResult.errors`` and the others' results are kept;
    - ``store`` and ``batch_id``: a durable batch. Chat ``i`` is durable chat
      ``f"{batch_id}/{i}"`` (``f"{batch_id}/{key(input)}"`` with ``key``); a batch run again
      after an interruption replays the finished chats (no model request), resumes the
      interrupted ones and starts the rest. On Ray every worker must reach the store (a
      ``SqliteChatStore`` on a shared path, a ``RedisChatStore``);
    - ``budget``: a :class:`parley.usage.Budget` for the whole batch: once spent, no new chat
      starts (their indexes are in ``BatchResult.not_run``) and running chats end at their
      next step, as a chat's own budget ends it;
    - ``progress``: a progress bar (tqdm, else a line on stderr); None: in a terminal or a
      notebook only;
    - ``quiet``: drop what the chats print (their transcripts), the default.
    """
    items = list(inputs)
    _check(concurrency, retries, retry_on, store, batch_id)
    budget = checked_budget(budget)
    ray_backend = _ray_backend(backend)
    chat_ids = _chat_ids(items, batch_id, key) if store is not None else None
    todos = [Todo(i, x, chat_ids[i] if chat_ids else None) for i, x in enumerate(items)]
    where = "ray" if ray_backend is not None else "local"
    bar = Progress(len(todos), wanted(progress), desc=f"chats ({where})")
    started = time.monotonic()
    try:
        if not todos:
            done = Finished()
        elif ray_backend is None:
            settings = Settings(retries, retry_on, quiet, "always")
            work = Work(todos, chat_factory, store, settings, concurrency, budget)
            done = await _run_local(work, bar)
        else:
            from ._portable import portable

            settings = Settings(retries, retry_on, quiet, "picklable")
            work = Work(todos, chat_factory, portable(store), settings, concurrency, budget)
            done = await run_in_thread(run_on_ray, ray_backend, work, bar)
    finally:
        bar.close()
    if done.unused:
        warnings.warn(
            f"{done.unused} chats of the durable batch {batch_id!r} were not run by "
            "item.a_initiate_chat (or item.a_initiate_chats): they are not durable",
            UserWarning,
            stacklevel=2,
        )
    return _result(len(todos), done, chat_ids, started, where)


run_chats = sync_of(a_run_chats, "run_chats")
"""The blocking form of :func:`a_run_chats` (same arguments, same result); it works in
notebooks too, where an event loop is already running."""


async def _run_local(work: Work, bar: Progress) -> Finished:
    done = Finished()
    failed = 0
    engine = Engine(work.factory, work.store, work.settings, work.concurrency)
    with _usage.ledger(work.budget) as ledger:

        def finish(outcome: Outcome) -> None:
            nonlocal failed
            done.outcomes[outcome.index] = outcome
            failed += outcome.error is not None
            bar.set(len(done.outcomes), failed, ledger.spent.cost)

        try:
            await engine.run(work.todos, ledger, finish)
        finally:
            engine.close()
        done.stop_reason = ledger.stopped()  # its budget, or that of a chat the batch runs in
        done.calls = ledger.all_calls()
    done.workers = {"local": sum(1 for o in done.outcomes.values() if not o.not_run)}
    done.unused = engine.unused
    return done


def _result(
    total: int, done: Finished, chat_ids: list[str] | None, started: float, backend: str
) -> BatchResult[Any]:
    results: list[Any] = [None] * total
    errors = {}
    not_run = []
    for index in range(total):
        outcome = done.outcomes[index]
        if outcome.error is not None:
            error = outcome.error
            if error.chat_id is None and chat_ids is not None:
                error = replace(error, chat_id=chat_ids[index])
            errors[index] = error
        elif outcome.not_run:
            not_run.append(index)
        else:
            results[index] = outcome.result
    return BatchResult(
        results,
        errors,
        not_run,
        done.stop_reason,
        Usage(done.calls),
        chat_ids,
        time.monotonic() - started,
        backend,
        done.workers,
    )


def _check(concurrency: int, retries: int, retry_on: Any, store: Any, batch_id: str | None) -> None:
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be an int of 1 or more, got {concurrency!r}")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries must be an int of 0 or more, got {retries!r}")
    if not callable(retry_on) and not (
        isinstance(retry_on, tuple) and all(isinstance(t, type) for t in retry_on)
    ):
        raise TypeError("retry_on must be a predicate or a tuple of exception classes")
    if store is not None and (not isinstance(batch_id, str) or not batch_id):
        raise ValueError(
            "a durable batch (store=) needs a batch_id= string: its chats are "
            "'<batch_id>/<index>' in the store, found again when the batch runs again"
        )
    if store is None and batch_id is not None:
        raise ValueError("batch_id= names a durable batch: give store= too")


def _ray_backend(backend: Any) -> RayBackend | None:
    if backend == "local":
        return None
    if backend == "ray":
        return RayBackend()
    if isinstance(backend, RayBackend):
        return backend
    raise ValueError(f"backend must be 'local', 'ray' or a RayBackend, got {backend!r}")


def _chat_ids(
    items: list[Any], batch_id: str | None, key: Callable[[Any], str] | None
) -> list[str]:
    if key is None:
        return [f"{batch_id}/{i}" for i in range(len(items))]
    ids = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        name = key(item)
        if not isinstance(name, str) or not name:
            raise TypeError(f"key(inputs[{i}]) must be a non-empty str, got {name!r}")
        if name in seen:
            raise ValueError(
                f"key gives inputs[{seen[name]}] and inputs[{i}] the same key {name!r}: each "
                "chat of a durable batch needs its own"
            )
        seen[name] = i
        ids.append(f"{batch_id}/{name}")
    return ids
