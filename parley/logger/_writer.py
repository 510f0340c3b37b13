"""One thread that owns a log's sink (a database connection, a file) and writes what callers
queue: callers pay a ``queue.put``; serialization and I/O happen here, in batches.

Each queued item is ``(function, args)``, run on the writer thread, or a *row*: a flat tuple
whose first element is the index of one of the sink's row handlers, which receives the whole
tuple. An item that raises is logged (never raised to the chat that logged it).

Rows are for the records logged on every turn. A record waits up to ``_LINGER`` for its
batch, long enough for the garbage collector's young collections to promote whatever it
holds; promoted objects add up until they trigger a full collection of the process's heap
(tens of milliseconds with the openai SDK loaded), which the chat then pays. A row holding
only strings, numbers and None is untracked at the first collection it meets and so is never
promoted: that is why the hot records are queued as rows of text. After each batch (everything queued by the
time the thread gets to it, up to ``_BATCH``) the sink commits once. ``flush()`` waits until
everything queued before it is committed; ``close()`` flushes, closes the sink and ends the
thread. A writer left open is flushed and closed at interpreter exit. In a forked child the
writer thread does not exist: the child's writers drop what it logs (the parent's records are
the parent's to write).
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Sink", "Writer"]

logger = logging.getLogger(__name__)

_BATCH = 5000
_FLUSH_TIMEOUT = 30.0
# After the first record of a batch, the writer waits this long for more (unless someone is
# waiting for a flush): fewer wake-ups and commits, so less time taken from the chats' threads.
_LINGER = 0.5


class Sink(Protocol):
    """Where a writer writes; every method runs on the writer thread."""

    def open(self) -> None: ...

    def commit(self) -> None: ...

    def close(self) -> None: ...


class _Marker:
    __slots__ = ("done", "stop")

    def __init__(self, stop: bool) -> None:
        self.done = threading.Event()
        self.stop = stop


class Writer:
    """The writer thread of one sink (see the module docstring)."""

    def __init__(
        self, name: str, sink: Sink, rows: tuple[Callable[[tuple[Any, ...]], None], ...] = ()
    ) -> None:
        self._name = name
        self._sink = sink
        self._rows = rows
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._opened = threading.Event()
        self._urgent = threading.Event()
        self._open_error: BaseException | None = None

    def start(self) -> None:
        """Start the thread and open the sink there; raises what opening raised."""
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()
        self._opened.wait()
        if self._open_error is not None:
            self._closed = True
            raise self._open_error
        _open_writers.add(self)

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._closed

    @property
    def started(self) -> bool:
        """Whether :meth:`start` was called (the writer may have closed since)."""
        return self._thread is not None or self._closed

    def put(self, function: Callable[..., Any], *args: Any) -> None:
        """Queue ``function(*args)`` for the writer thread (dropped unless running)."""
        if self._thread is not None and not self._closed:
            self._queue.put((function, args))

    def put_row(self, row: tuple[Any, ...]) -> None:
        """Queue ``row`` for the row handler ``rows[row[0]]`` (dropped unless running)."""
        if self._thread is not None and not self._closed:
            self._queue.put(row)

    def flush(self, timeout: float = _FLUSH_TIMEOUT) -> bool:
        """Wait until what was queued so far is committed; False on timeout."""
        if self._closed or self._thread is None or threading.current_thread() is self._thread:
            return True
        marker = _Marker(stop=False)
        self._queue.put(marker)
        self._urgent.set()
        return marker.done.wait(timeout)

    def close(self, timeout: float = _FLUSH_TIMEOUT) -> None:
        """Write what is queued, close the sink and end the thread (idempotent)."""
        if self._closed or self._thread is None:
            return
        self._closed = True
        if not self._thread.is_alive():
            _open_writers.discard(self)
            return
        _open_writers.discard(self)
        marker = _Marker(stop=True)
        self._queue.put(marker)
        self._urgent.set()
        if threading.current_thread() is not self._thread:
            if not marker.done.wait(timeout):
                logger.error(
                    "[%s] the log writer did not finish within %.0f s", self._name, timeout
                )
            self._thread.join(timeout)

    # -- the thread -----------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._sink.open()
        except BaseException as error:  # reported to start()'s caller
            self._open_error = error
            self._opened.set()
            return
        self._opened.set()
        get, get_nowait = self._queue.get, self._queue.get_nowait
        while True:
            batch = [get()]
            if not isinstance(batch[0], _Marker):
                self._urgent.wait(_LINGER)
            self._urgent.clear()
            while len(batch) < _BATCH:
                try:
                    batch.append(get_nowait())
                except queue.Empty:
                    break
            markers = [item for item in batch if isinstance(item, _Marker)]
            for item in batch:
                if not isinstance(item, _Marker):
                    self._write(item)
            try:
                self._sink.commit()
            except Exception as error:
                logger.error("[%s] commit failed: %s", self._name, error)
            if any(m.stop for m in markers):
                self._drain()
                try:
                    self._sink.close()
                except Exception as error:
                    logger.error("[%s] close failed: %s", self._name, error)
                for marker in markers:
                    marker.done.set()
                return
            for marker in markers:
                marker.done.set()

    def _write(self, item: tuple[Any, ...]) -> None:
        try:
            head = item[0]
            if type(head) is int:
                self._rows[head](item)
            else:
                head(*item[1])
        except Exception as error:
            logger.error(
                "[%s] could not write a log record: %s: %s", self._name, type(error).__name__, error
            )

    def _drain(self) -> None:
        # Items queued by threads that saw the writer open just before close().
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, _Marker):
                item.done.set()
            else:
                self._write(item)
        try:
            self._sink.commit()
        except Exception as error:
            logger.error("[%s] commit failed: %s", self._name, error)


_open_writers: weakref.WeakSet[Writer] = weakref.WeakSet()


@atexit.register
def _close_at_exit() -> None:
    for writer in list(_open_writers):
        writer.close(timeout=5.0)


def _forget_in_child() -> None:
    for writer in list(_open_writers):
        writer._closed = True
    _open_writers.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
