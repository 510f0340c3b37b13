"""run_sync: the sync API over the async core, from scripts, threads and running loops."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from parley._core.runtime import run_in_thread, run_sync, runner_loop

marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")


async def _value(x: int) -> int:
    await asyncio.sleep(0)
    return x * 2


def test_run_sync_from_plain_code() -> None:
    assert run_sync(_value(21)) == 42


async def test_run_sync_inside_a_running_loop() -> None:
    assert run_sync(_value(5)) == 10


def test_run_sync_from_many_threads() -> None:
    results: list[int] = []
    threads = [
        threading.Thread(target=lambda i=i: results.append(run_sync(_value(i)))) for i in range(20)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [i * 2 for i in range(20)]


def test_errors_propagate_with_their_type() -> None:
    async def boom() -> None:
        raise KeyError("lost")

    with pytest.raises(KeyError, match="lost"):
        run_sync(boom())


def test_context_variables_reach_the_coroutine() -> None:
    async def read() -> str:
        return marker.get()

    token = marker.set("from the caller")
    try:
        assert run_sync(read()) == "from the caller"
    finally:
        marker.reset(token)


def test_nested_sync_call_from_the_runner_does_not_deadlock() -> None:
    async def outer() -> int:
        # a sync callback inside async code calling the sync API again
        return run_sync(_value(4)) + 1

    assert run_sync(outer()) == 9


def test_sync_calls_run_on_the_runner_loop() -> None:
    async def where() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    assert run_sync(where()) is runner_loop()


async def test_cancelling_a_worker_cancels_the_sync_call_it_makes() -> None:
    """A sync callback in a worker thread (a tool calling initiate_chat) runs a coroutine
    through run_sync; cancelling the task that awaits the worker cancels that coroutine too,
    and the cancellation returns once it has stopped."""
    cancelled = threading.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    task = asyncio.ensure_future(run_in_thread(run_sync, slow()))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled.is_set()
