"""Run parley's async core from sync code, and its network I/O on one long-lived loop.

parley writes every step once, as a coroutine. Two helpers connect it to the outside:

- :func:`run_sync` runs a coroutine to completion from synchronous code and returns its result.
  It works with no event loop (a script), and inside a thread whose loop is already running
  (Jupyter), because the coroutine runs on parley's own background loop, never on the caller's.
- :func:`on_runner` lets async code run a coroutine on that same background loop and await it
  from any loop. Network clients (``AsyncOpenAI``'s connection pool) live there, bound to one
  loop for the life of the process, so they are shared by sync and async callers and never left
  behind on a loop that a test or ``asyncio.run`` has closed.

The caller's ``contextvars`` (the default IOStream, for instance) are carried into the
coroutine. Cancelling the awaiting task cancels the coroutine; so does Ctrl-C in sync code.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["on_runner", "run_sync", "runner_loop"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_pid: int | None = None


def runner_loop() -> asyncio.AbstractEventLoop:
    """parley's background event loop, started on first use (and again after a fork)."""
    global _loop, _thread, _pid
    with _lock:
        if _loop is None or _pid != os.getpid() or _thread is None or not _thread.is_alive():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            thread = threading.Thread(target=serve, name="parley-runner", daemon=True)
            thread.start()
            ready.wait()
            _loop, _thread, _pid = loop, thread, os.getpid()
        return _loop


def _submit(
    coro: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop
) -> concurrent.futures.Future[T]:
    """Schedule ``coro`` on ``loop`` as a task that sees a copy of the caller's context."""
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    ctx = contextvars.copy_context()

    # The future stays PENDING while the task runs (never set RUNNING) so that the waiter can
    # still cancel it; its cancellation is forwarded to the task.
    def start() -> None:
        if future.cancelled():
            coro.close()
            return
        # A task copies the context current at its creation: create it inside the caller's.
        task = ctx.run(loop.create_task, coro)

        def done(t: asyncio.Task[T]) -> None:
            if future.done():
                return
            if t.cancelled():
                future.cancel()
            elif (error := t.exception()) is not None:
                future.set_exception(error)
            else:
                future.set_result(t.result())

        def forward_cancel(f: concurrent.futures.Future[T]) -> None:
            if f.cancelled() and not task.done():
                loop.call_soon_threadsafe(task.cancel)

        task.add_done_callback(done)
        future.add_done_callback(forward_cancel)

    loop.call_soon_threadsafe(start)
    return future


def _on_runner_thread() -> bool:
    return _thread is not None and threading.current_thread() is _thread and _pid == os.getpid()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion and return its result, from any synchronous code."""
    if _on_runner_thread():
        # Sync code called from a coroutine already on the runner (a sync callback inside an
        # async chat): waiting for the runner here would deadlock it, so use a private loop.
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="parley-nested") as pool:
            ctx = contextvars.copy_context()
            return pool.submit(ctx.run, asyncio.run, coro).result()
    future = _submit(coro, runner_loop())
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        raise


async def on_runner(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` running on the runner loop (directly, if this already is the runner)."""
    loop = runner_loop()
    if asyncio.get_running_loop() is loop:
        return await coro
    return await asyncio.wrap_future(_submit(coro, loop))
