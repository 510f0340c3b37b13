"""parley's runtime: the one owner of event loops, worker threads and what a fork leaves behind.

parley writes every step once, as a coroutine, and async callers run it on their own event loop
from the first ``await`` to the last byte on the wire. This module connects that core to the rest:

- :func:`run_sync` runs a coroutine from synchronous code, on parley's background *runner* loop
  (:func:`runner_loop`), so it works in a script and inside a thread whose loop is already
  running (Jupyter). The caller's ``contextvars`` (the default IOStream, say) go along.
  ``SystemExit`` and ``KeyboardInterrupt`` raised by user code reach that caller as themselves;
  the runner catches them where asyncio re-raises them and keeps serving every other chat.
- :func:`run_in_thread` and :func:`to_thread` run blocking work in a worker thread with a
  :class:`CancelToken` (:func:`current_token`) that cancelling the awaiting task cancels, so
  code executors and nested sync chats stop too.
- :func:`loop_resource` keeps objects bound to one event loop (the openai connection pools),
  shared by everything on that loop and closed when it shuts down.
- :func:`dedicated_worker` is the process's one thread of a name, for blocking work that must
  stay on one thread (the cache's database connections).
- :func:`after_fork` is the one fork reset (threads do not survive a fork), and
  :func:`keep_until_exit` holds what cannot be closed properly: what a fork inherited from the
  parent (the parent's to close), what a loop closed without shutting down left open.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextvars
import functools
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine, Hashable
from typing import Any, TypeVar

from .lifetime import Bound
from .loop_scope import LoopScope
from .worker import Worker

__all__ = [
    "WIND_DOWN_SECONDS",
    "CancelToken",
    "Worker",
    "after_fork",
    "current_token",
    "dedicated_worker",
    "keep_until_exit",
    "loop_resource",
    "resource_shard",
    "run_in_thread",
    "run_sync",
    "run_under",
    "runner_loop",
    "start_sync",
    "sync_face",
    "to_thread",
]

T = TypeVar("T")
R = TypeVar("R")

WIND_DOWN_SECONDS = 5.0
"""How long a cancelled call waits for the work it started to stop before giving up on it.
Workers that watch their token (the code executors) stop well within a second."""


# -- fork ---------------------------------------------------------------------------------------


def after_fork(callback: Callable[[], object]) -> None:
    """Call ``callback`` in the child of every ``os.fork()`` (multiprocessing's "fork" too),
    before the child runs anything else; callbacks run in the order they were registered.

    Only the forking thread survives a fork, so state that stands for a thread, a loop or a
    connection of the parent must be forgotten there (and what the parent opened handed to
    :func:`keep_until_exit`, not closed). Nothing happens where there is no fork (Windows).
    """
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=callback)


_kept: list[object] = []


def keep_until_exit(*objects: object) -> None:
    """Keep ``objects`` referenced for the life of the process, unclosed: collecting them would
    close them (or warn), and they are not ours to close (inherited through a fork: the
    parent's) or cannot be closed any more (bound to an event loop closed under them)."""
    _kept.extend(objects)


# -- cancellation -------------------------------------------------------------------------------

_current: contextvars.ContextVar[CancelToken | None] = contextvars.ContextVar(
    "parley_cancel_token", default=None
)


class CancelToken:
    """A one-way flag saying "stop", safe to set from any thread.

    Blocking code that can be interrupted polls :attr:`cancelled`, waits with :meth:`wait`
    instead of sleeping, or registers a callback with :meth:`on_cancel`.
    """

    __slots__ = ("_callbacks", "_event", "_lock")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], object]] = []

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` has been called."""
        return self._event.is_set()

    def cancel(self) -> None:
        """Set the flag and run the registered callbacks (once; later calls do nothing)."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def wait(self, timeout: float | None) -> bool:
        """Sleep until cancelled or ``timeout`` seconds passed; whether it was cancelled."""
        return self._event.wait(timeout)

    def on_cancel(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Run ``callback`` when the token is cancelled (at once if it already is); returns a
        function that unregisters it."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)

                def remove() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return remove
        callback()
        return lambda: None


def current_token() -> CancelToken | None:
    """The token of the :func:`run_in_thread` / :func:`to_thread` call this code runs under."""
    return _current.get()


def run_under(token: CancelToken, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` as a worker of :func:`run_in_thread` whose token is ``token``
    runs it (for driving blocking code, an executor say, from a thread of one's own)."""
    context = contextvars.copy_context()
    context.run(_current.set, token)
    return context.run(fn, *args, **kwargs)


async def _in_thread(fn: Callable[[], T], wind_down: float) -> T:
    loop = asyncio.get_running_loop()
    token = CancelToken()
    # The caller's context, copied here (run_in_executor copies nothing): the worker sees the
    # chat it works for (parley.usage), the default IOStream, the current step.
    context = contextvars.copy_context()
    context.run(_current.set, token)
    future = loop.run_in_executor(None, context.run, fn)
    try:
        # Shielded: cancelling the task must leave us the worker's future to wait for.
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        token.cancel()
        if wind_down:
            await asyncio.wait({future}, timeout=wind_down)
        future.add_done_callback(_retrieve)  # the worker's error is moot once we were cancelled
        raise


async def run_in_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``await fn(*args, **kwargs)`` in a worker thread, with the caller's context variables.

    If the awaiting task is cancelled, the worker's token is cancelled and the cancellation
    waits up to :data:`WIND_DOWN_SECONDS` for the worker to return before it propagates: once
    it has, the work it stood for (a code block, a nested chat) has stopped too.
    """
    return await _in_thread(functools.partial(fn, *args, **kwargs), WIND_DOWN_SECONDS)


async def to_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Like :func:`run_in_thread`, for work nobody needs to wait for once its caller is gone
    (a custom model client's request): a cancellation cancels the token and propagates at once."""
    return await _in_thread(functools.partial(fn, *args, **kwargs), 0)


def _retrieve(future: asyncio.Future[Any] | concurrent.futures.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


# -- the runner loop, for sync callers ----------------------------------------------------------

_lock = threading.Lock()
_runner: tuple[asyncio.AbstractEventLoop, threading.Thread] | None = None


def runner_loop() -> asyncio.AbstractEventLoop:
    """parley's background event loop, started on first use (and again in a forked child)."""
    global _runner
    with _lock:
        if _runner is None or not _runner[1].is_alive():
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
            _runner = loop, thread
        return _runner[0]


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
                _retrieve(t)  # nobody waits for a cancelled call's error
            elif t.cancelled():
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


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion and return its result, from any synchronous code."""
    runner = _runner
    if runner is not None and threading.current_thread() is runner[1]:
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


def start_sync(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Start ``coro`` on the runner loop without waiting for it (with the caller's context,
    as :func:`run_sync`); cancelling the future cancels it. Called on the runner itself, it
    runs on a private loop in a thread of its own instead, so the caller may block on it."""
    runner = _runner
    if runner is not None and threading.current_thread() is runner[1]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        ctx = contextvars.copy_context()

        def run() -> None:
            try:
                future.set_result(ctx.run(asyncio.run, coro))
            except BaseException as e:  # the caller reads it from the future
                future.set_exception(e)

        threading.Thread(target=run, name="parley-nested", daemon=True).start()
        return future
    return _submit(coro, runner_loop())


def sync_face(
    method: Callable[..., Coroutine[Any, Any, T]],
    run: Callable[[Coroutine[Any, Any, T]], T] = run_sync,
) -> Callable[..., T]:
    """The sync method of the async method ``a_<name>``: named ``<name>``, same signature and
    docs. It runs ``a_<name>`` as looked up on its first argument (the instance, or the class
    of a classmethod) through ``run``, so a subclass that overrides only ``a_<name>`` changes
    both forms."""
    async_name = method.__name__

    @functools.wraps(method)
    def sync(owner: Any, /, *args: Any, **kwargs: Any) -> T:
        return run(getattr(owner, async_name)(*args, **kwargs))

    sync.__name__ = async_name.removeprefix("a_")
    sync.__qualname__ = method.__qualname__.replace(async_name, sync.__name__)
    return sync


# -- per-loop resources -------------------------------------------------------------------------

_scopes: dict[asyncio.AbstractEventLoop, LoopScope] = {}
_shard: contextvars.ContextVar[int] = contextvars.ContextVar("parley_pool_shard", default=0)


def loop_resource(
    key: Hashable, make: Callable[[], R], close: Callable[[R], Awaitable[object]]
) -> R:
    """The resource ``key`` of the running event loop, made by ``make()`` on first use.

    Everything on one loop shares it (inside :func:`resource_shard`, everything of that
    shard); ``await close(resource)`` runs when the loop shuts down (``asyncio.run``,
    ``asyncio.Runner`` and pytest-asyncio do that), or at exit for a loop still open then
    (parley's runner loop, a notebook's).
    """
    loop = asyncio.get_running_loop()
    scope = _scopes.get(loop)
    if scope is None:
        scope = _open_scope(loop)
    shard = _shard.get()
    return scope.get((key, shard) if shard else key, make, close)


def resource_shard(shard: int) -> Bound[int]:
    """``with resource_shard(n):`` the code inside uses the loop resources of shard ``n`` (0:
    the loop's own). A batch of hundreds of concurrent chats spreads them over several
    connection pools this way: httpcore's pool scans every connection it holds at each
    request, so one pool of 400 connections cost a quarter of such a batch's CPU time."""
    return Bound(_shard, shard)


def _open_scope(loop: asyncio.AbstractEventLoop) -> LoopScope:
    with _lock:
        # A loop closed without shutting down its async generators never told its scope.
        for other in [s for s in _scopes.values() if s.loop.is_closed()]:
            _scopes.pop(other.loop, None)
            keep_until_exit(*other.abandon())
        scope = _scopes[loop] = LoopScope(loop, lambda s: _scopes.pop(s.loop, None))
        return scope


@atexit.register
def _close_scopes() -> None:
    """Close what is still open on live loops: idle keep-alive sockets left to the garbage
    collector would each warn "unclosed transport" as the interpreter goes."""
    with _lock:
        scopes = list(_scopes.values())
        _scopes.clear()
    for scope in scopes:
        keep_until_exit(*scope.close_now(WIND_DOWN_SECONDS))


# -- a dedicated thread -------------------------------------------------------------------------


_workers: dict[str, Worker] = {}


def dedicated_worker(name: str) -> Worker:
    """The process's worker thread called ``name`` (started on first use, again in a forked
    child): for blocking work that must always run on the same thread, such as a database
    connection that belongs to the thread that opened it. It serves until the process ends."""
    with _lock:
        worker = _workers.get(name)
        if worker is None:
            worker = _workers[name] = Worker(name)
        return worker


def _forget_the_parent() -> None:
    global _lock, _runner
    _lock = threading.Lock()  # another thread may have held it at the fork
    _runner = None
    keep_until_exit(*_scopes.values())
    _scopes.clear()
    for worker in _workers.values():
        worker.forget()


after_fork(_forget_the_parent)
