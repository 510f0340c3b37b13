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
coroutine. Cancelling the awaiting task cancels the coroutine; so does Ctrl-C in sync code, and
both wait (bounded) for the coroutine to wind down, so code blocks it was running are stopped
before the caller goes on (or the interpreter exits).

``SystemExit`` and ``KeyboardInterrupt`` raised by user code inside a chat (``sys.exit()`` in a
tool, ``argparse`` on bad model input) reach the caller that ran the chat as themselves. asyncio
re-raises those two out of the event loop itself; the runner thread catches them there and
keeps serving, so every other chat on the loop carries on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from ._cancel import WIND_DOWN_SECONDS, current_token

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
                while True:
                    try:
                        loop.run_forever()
                        return
                    except (SystemExit, KeyboardInterrupt):
                        # Raised by user code in a task: asyncio stored it as the task's
                        # exception, so whoever awaits the task gets it. The loop is fine.
                        continue

            thread = threading.Thread(target=serve, name="parley-runner", daemon=True)
            thread.start()
            ready.wait()
            _loop, _thread, _pid = loop, thread, os.getpid()
        return _loop


class _Submitted(concurrent.futures.Future[T]):
    """The result of a coroutine running on the runner; ``finished`` is set when its task has
    ended, even after the future itself was cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self.finished = threading.Event()


def _submit(coro: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop) -> _Submitted[T]:
    """Schedule ``coro`` on ``loop`` as a task that sees a copy of the caller's context."""
    future: _Submitted[T] = _Submitted()
    ctx = contextvars.copy_context()

    # The future stays PENDING while the task runs (never set RUNNING) so that the waiter can
    # still cancel it; its cancellation is forwarded to the task.
    def start() -> None:
        if future.cancelled():
            coro.close()
            future.finished.set()
            return
        # A task copies the context current at its creation: create it inside the caller's.
        task = ctx.run(loop.create_task, coro)

        def done(t: asyncio.Task[T]) -> None:
            future.finished.set()
            if future.done():
                if not t.cancelled():
                    t.exception()  # retrieved: nobody waits for a cancelled call's error
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
    # Sync code in a worker thread of a cancellable step (a tool calling initiate_chat): the
    # step's cancellation cancels this call too.
    token = current_token()
    unregister = token.on_cancel(future.cancel) if token is not None else None
    try:
        return future.result()
    except (KeyboardInterrupt, concurrent.futures.CancelledError):
        future.cancel()
        # Let the coroutine wind down (stop the code it runs) before the caller goes on; a
        # second Ctrl-C ends the wait.
        future.finished.wait(WIND_DOWN_SECONDS)
        raise
    finally:
        if unregister is not None:
            unregister()


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # nobody waits for the result of a cancelled call


async def on_runner(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` running on the runner loop (directly, if this already is the runner)."""
    loop = runner_loop()
    if asyncio.get_running_loop() is loop:
        return await coro
    future = _submit(coro, loop)
    waiter = asyncio.wrap_future(future)
    try:
        # Shielded, so that a cancellation is forwarded by us, after which we wait for it.
        return await asyncio.shield(waiter)
    except asyncio.CancelledError:
        waiter.add_done_callback(_retrieve)
        future.cancel()
        await asyncio.to_thread(future.finished.wait, WIND_DOWN_SECONDS)
        raise
