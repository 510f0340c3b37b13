"""parley._sync: the sync API over the async core, from scripts, threads and running loops."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from parley._sync import on_runner, run_sync, runner_loop

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


async def test_on_runner_runs_on_the_runner_loop_and_cancels() -> None:
    async def where() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    assert await on_runner(where()) is runner_loop()
    cancelled = threading.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    task = asyncio.ensure_future(on_runner(slow()))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(cancelled.wait, 2)
