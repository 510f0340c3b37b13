"""The Ray backend's driver: workers (async actors) on the cluster, chunks of chats fed to
them, chunks of a lost worker given to the others, each chat's outcome kept once.

Ray's own retries are off (``max_restarts=0``, ``max_task_retries=0``): when a worker dies
(its process, or its node) the driver hands its unfinished chunks to the workers left, starts
a replacement where the cluster has room, and keeps the first outcome it receives for each
chat, so every chat's result arrives exactly once, whatever was lost on the way. A chat cut
short by the loss runs again from its start, or, in a durable batch, resumes from its last
recorded step.
"""

from __future__ import annotations

import math
import os
import pickle
import sys
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from .._core.runtime import CancelToken, current_token
from ..usage._budget import Spent, exhausted
from ..usage._run import LLMCall
from ._engine import Finished, Outcome, Work
from ._progress import Progress
from ._ray_auth import starts_new_instance, use_token_auth_for_new_instance
from ._ray_start import allow_slow_registration, start_ray
from ._ray_worker import ChatWorker, ChunkReport
from ._result import ChatError

__all__ = ["RayBackend", "WorkerLostError", "run_on_ray"]

INSTALL_HINT = "pip install 'parley[batch]'"


@dataclass(frozen=True)
class RayBackend:
    """Run a batch on a Ray cluster: ``run_chats(..., backend=RayBackend(...))``
    (``backend="ray"`` is ``RayBackend()``).

    - ``address``: passed to ``ray.init`` when this process has not initialized Ray yet
      (None: Ray's default — ``RAY_ADDRESS``, a cluster ``ray start`` began on this machine,
      else a new single-machine one); ``init_kwargs``: more ``ray.init`` keywords. Ray stays
      initialized afterwards, for the next batch (``ray.shutdown()`` ends it).
    - ``workers``: how many worker actors (None: one per CPU of the cluster); each runs its
      share of ``concurrency`` chats at once on its own event loop.
    - ``actor_options``: each worker's ``.options(...)`` (default ``num_cpus=1``): resources,
      ``runtime_env`` (to ship your factory's code and parley to the cluster), ...
    - ``chunk_size``: chats per task (None: half a worker's share of ``concurrency``, so that
      the ``chunks_per_worker`` queued on a worker keep it busy); smaller chunks lose less
      work with a worker, larger ones cost fewer round trips.
    - ``max_worker_losses``: how often a chunk may be lost with its worker before its chats
      fail with ``WorkerLostError``; ``max_replacements``: workers started to replace lost
      ones (None: as many as ``workers``).
    - ``start_timeout``: seconds to wait, while no worker is up, for one to start.
    - ``init_timeout``: seconds to spend starting a new Ray instance (``ray.init`` with no
      cluster to join): Ray gives its node a fixed 30 s to come up, which a loaded machine can
      miss, so a start that timed out is cleaned up and tried again within this budget
      (``parley/batch/_ray_start.py``); then ``RayStartError``.
    - ``poll``: seconds between the progress and budget reports the workers send.
    """

    address: str | None = None
    workers: int | None = None
    actor_options: dict[str, Any] = field(default_factory=dict)
    chunk_size: int | None = None
    chunks_per_worker: int = 3
    max_worker_losses: int = 3
    max_replacements: int | None = None
    start_timeout: float = 120.0
    init_timeout: float = 300.0
    poll: float = 0.25
    init_kwargs: dict[str, Any] = field(default_factory=dict)


class WorkerLostError(RuntimeError):
    """The Ray workers running a chat were lost too often (see ``max_worker_losses``), or no
    worker could be started for it."""


@dataclass
class _Worker:
    handle: Any
    ready: Any  # the ObjectRef of ready() until it resolved, then None
    name: str = ""
    inflight: set[int] = field(default_factory=set)
    status: dict[int, tuple[int, tuple[float, int, int]]] = field(default_factory=dict)


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise ImportError(f"run_chats(backend='ray') needs Ray: {INSTALL_HINT}") from e
    return ray


def run_on_ray(backend: RayBackend, work: Work, progress: Progress) -> Finished:
    """Run ``work`` on Ray (blocking: :func:`run_chats` calls it in a worker thread, whose
    token a cancelled batch cancels)."""
    # A Ray instance this call starts must not serve whoever reaches its ports (_ray_auth), and
    # may take longer than Ray's default to come up on a loaded machine (_ray_start).
    temp_dir = backend.init_kwargs.get("_temp_dir")
    use_token_auth_for_new_instance(backend.address, temp_dir)
    if "ray" not in sys.modules and starts_new_instance(backend.address, temp_dir, os.environ):
        allow_slow_registration(backend.init_timeout, os.environ)
    ray = _import_ray()
    if not ray.is_initialized():
        start_ray(ray, backend.address, backend.init_kwargs, backend.init_timeout)
    driver = _Driver(ray, backend, work)
    return driver.run(progress, current_token())


class _Driver:
    def __init__(self, ray: Any, backend: RayBackend, work: Work) -> None:
        todos, concurrency = work.todos, work.concurrency
        self.ray = ray
        self.backend = backend
        self.budget = work.budget
        self.total = len(todos)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        wanted = max(1, backend.workers or cpus)
        size = backend.chunk_size or max(1, min(math.ceil(concurrency / wanted / 2), 256))
        self.chunks = {n: todos[i : i + size] for n, i in enumerate(range(0, self.total, size))}
        self.target = max(1, min(wanted, len(self.chunks)))  # no idle worker
        share = math.ceil(concurrency / self.target)
        self.losses: Counter[int] = Counter()
        self.queue: deque[int] = deque(self.chunks)
        self.outcomes: dict[int, Outcome] = {}
        self.workers: dict[int, _Worker] = {}
        self.refs: dict[Any, tuple[int, int]] = {}  # chunk task -> (worker, chunk)
        self.status_refs: dict[Any, int] = {}
        self.calls: list[LLMCall] = []
        self.spent = Spent()  # delivered chunks, and the last word of lost ones
        self.stop_reason: str | None = None
        self.per_worker: Counter[str] = Counter()
        self.unused = 0
        self.replacements = (
            backend.max_replacements if backend.max_replacements is not None else self.target
        )
        options = {"num_cpus": 1, **backend.actor_options, "max_restarts": 0}
        options.setdefault("max_task_retries", 0)
        self.actor = ray.remote(ChatWorker).options(**options)
        self.args = (work.factory, work.store, work.settings, share)
        self.started = time.monotonic()
        self.last_up = self.started  # when a worker was last up (or the batch began)
        self.next_poll = self.started
        self.next_id = 0

    # -- the loop -----------------------------------------------------------------------

    def run(self, progress: Progress, token: CancelToken | None) -> Finished:
        try:
            for _ in range(self.target):
                self._start_worker()
            while len(self.outcomes) < self.total:
                if token is not None and token.cancelled:
                    break
                self._dispatch()
                self._check_workers()
                self._wait()
                self._check_budget()
                progress.set(*self._progress())
        finally:
            for worker in self.workers.values():
                self._kill(worker)
        return Finished(
            self.outcomes, self.calls, self.stop_reason, dict(self.per_worker), self.unused
        )

    def _start_worker(self) -> None:
        handle = self.actor.remote(*self.args)
        self.workers[self.next_id] = _Worker(handle, handle.ready.remote())
        self.next_id += 1

    def _dispatch(self) -> None:
        for wid, worker in self.workers.items():
            while worker.ready is None and self.queue:
                if len(worker.inflight) >= self.backend.chunks_per_worker:
                    break
                chunk = self.queue.popleft()
                ref = worker.handle.run_chunk.remote(chunk, self.chunks[chunk])
                self.refs[ref] = (wid, chunk)
                worker.inflight.add(chunk)

    def _check_workers(self) -> None:
        """Replace lost workers while replacements last; with none left, or none up for
        ``start_timeout`` seconds, fail the chats left (never wait for nothing)."""
        while len(self.workers) < self.target and self.replacements > 0:
            self.replacements -= 1
            self._start_worker()
        error = None
        if any(w.ready is None for w in self.workers.values()):
            self.last_up = time.monotonic()
        elif not self.workers:
            error = WorkerLostError(
                "every Ray worker of the batch was lost, and as many replacements"
                " (max_replacements)"
            )
        elif time.monotonic() - self.last_up > self.backend.start_timeout:
            error = WorkerLostError(
                f"no Ray worker was up for {self.backend.start_timeout:.0f} s (start_timeout): "
                "the cluster has no room for one (actor_options asks for "
                f"{dict(self.backend.actor_options) or {'num_cpus': 1}})"
            )
        if error is not None:
            for chunk in self.queue:
                self._fail_chunk(chunk, error)
            self.queue.clear()

    def _wait(self) -> None:
        pending = [w.ready for w in self.workers.values() if w.ready is not None]
        waiting = [*self.refs, *self.status_refs, *pending]
        if not waiting:
            time.sleep(0.05)
            return
        timeout = max(0.01, min(self.backend.poll, self.next_poll - time.monotonic()))
        done, rest = self.ray.wait(waiting, num_returns=1, timeout=timeout)
        if done and rest:
            more, _ = self.ray.wait(rest, num_returns=len(rest), timeout=0)
            done += more
        ready_refs = {w.ready: wid for wid, w in self.workers.items() if w.ready is not None}
        for ref in done:
            if ref in self.refs:
                self._collect(ref, *self.refs.pop(ref))
            elif ref in self.status_refs:
                self._status(ref, self.status_refs.pop(ref))
            elif ref in ready_refs:
                self._up(ref, ready_refs[ref])
        if time.monotonic() >= self.next_poll and not self.status_refs:
            self.next_poll = time.monotonic() + self.backend.poll
            for wid, worker in self.workers.items():
                if worker.ready is None and worker.inflight:
                    self.status_refs[worker.handle.status.remote()] = wid

    # -- what comes back ------------------------------------------------------------------

    def _up(self, ref: Any, wid: int) -> None:
        worker = self.workers[wid]
        try:
            worker.name = self.ray.get(ref)
        except self.ray.exceptions.RayActorError as e:
            if e.actor_init_failed:
                raise RuntimeError(f"a Ray worker of the batch could not start: {e}") from e
            self._lose(wid)
            return
        worker.ready = None
        if self.stop_reason is not None:
            worker.handle.stop.remote(self.stop_reason)

    def _collect(self, ref: Any, wid: int, chunk: int) -> None:
        worker = self.workers.get(wid)
        if worker is None:  # lost already; its chunks were given to others
            return
        try:
            report: ChunkReport = self.ray.get(ref)
        except _lost_errors(self.ray) as e:
            if isinstance(e, self.ray.exceptions.RayActorError) and e.actor_init_failed:
                raise RuntimeError(f"a Ray worker of the batch could not start: {e}") from e
            self._lose(wid)
            return
        except Exception as e:  # the chunk itself failed (not a chat): its chats fail
            worker.inflight.discard(chunk)
            worker.status.pop(chunk, None)
            self._fail_chunk(chunk, e)
            return
        worker.inflight.discard(chunk)
        worker.status.pop(chunk, None)
        self.calls.extend(report.calls)
        self._add_spent(report.spent)
        self.unused += report.unused
        for index, data in report.outcomes:
            if index not in self.outcomes:  # exactly once, whatever was sent again
                self.outcomes[index] = _loaded(index, data)
                self.per_worker[report.worker] += 1

    def _status(self, ref: Any, wid: int) -> None:
        worker = self.workers.get(wid)
        if worker is None:
            return
        try:
            status = self.ray.get(ref)
        except Exception:  # a lost worker: its chunk tasks will say so
            return
        worker.status = {c: s for c, s in status.items() if c in worker.inflight}

    def _lose(self, wid: int) -> None:
        """Worker ``wid`` is gone: its chunks go back to the front of the queue (or fail,
        lost too often), what it had reported spending still counts."""
        worker = self.workers.pop(wid)
        for ref in [r for r, (w, _) in self.refs.items() if w == wid]:
            del self.refs[ref]
        for chunk in sorted(worker.inflight, reverse=True):
            _, spent = worker.status.get(chunk, (0, (0.0, 0, 0)))
            self._add_spent(spent)
            self.losses[chunk] += 1
            if self.losses[chunk] > self.backend.max_worker_losses:
                self._fail_chunk(
                    chunk,
                    WorkerLostError(
                        f"the Ray workers running this chat were lost "
                        f"{self.losses[chunk]} times (max_worker_losses)"
                    ),
                )
            else:
                self.queue.appendleft(chunk)
        self._kill(worker)

    def _fail_chunk(self, chunk: int, error: BaseException) -> None:
        for todo in self.chunks[chunk]:
            if todo.index not in self.outcomes:
                failure = ChatError.of(todo.index, todo.chat_id, error, 1, False)
                self.outcomes[todo.index] = Outcome(todo.index, error=failure, attempts=1)

    # -- budget and progress ------------------------------------------------------------

    def _add_spent(self, spent: tuple[float, int, int]) -> None:
        self.spent.cost += spent[0]
        self.spent.tokens += spent[1]
        self.spent.llm_calls += spent[2]

    def _running_spent(self) -> Spent:
        total = Spent(self.spent.cost, self.spent.tokens, self.spent.llm_calls)
        for worker in self.workers.values():
            for _, (cost, tokens, calls) in worker.status.values():
                total.cost += cost
                total.tokens += tokens
                total.llm_calls += calls
        return total

    def _check_budget(self) -> None:
        if self.budget is None or self.stop_reason is not None:
            return
        reason = exhausted(self.budget, self._running_spent(), time.monotonic() - self.started)
        if reason is None:
            return
        self.stop_reason = reason
        for chunk in self.queue:
            for todo in self.chunks[chunk]:
                self.outcomes.setdefault(todo.index, Outcome(todo.index, not_run=True))
        self.queue.clear()
        for worker in self.workers.values():
            if worker.ready is None:
                worker.handle.stop.remote(reason)

    def _progress(self) -> tuple[int, int, float]:
        running = sum(d for w in self.workers.values() for d, _ in w.status.values())
        failed = sum(1 for o in self.outcomes.values() if o.error is not None)
        return len(self.outcomes) + running, failed, self._running_spent().cost

    def _kill(self, worker: _Worker) -> None:
        try:
            self.ray.kill(worker.handle, no_restart=True)
        except Exception:  # already gone
            pass


def _lost_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """What a chunk task raises when its worker, or the worker's node, went away."""
    ex = ray.exceptions
    return (
        ex.RayActorError,
        ex.WorkerCrashedError,
        ex.NodeDiedError,
        ex.ObjectLostError,
        ex.LocalRayletDiedError,
    )


def _loaded(index: int, data: bytes) -> Outcome:
    """A chat's outcome as the worker sent it; an error of its own if it cannot be read here
    (a class the worker had and this process cannot import, say)."""
    try:
        outcome: Outcome = pickle.loads(data)
    except Exception as e:
        failure = ChatError.of(index, None, e, 1, False)
        return Outcome(index, error=failure, attempts=1)
    return outcome
