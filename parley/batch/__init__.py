"""Run the same conversation over thousands of inputs: evaluations, synthetic data, batch jobs.

    from parley.batch import run_chats

    def solve(item):  # one chat per input; sync or async
        user, assistant = make_agents()
        return item.initiate_chat(user, assistant, message=item.input, max_turns=2)

    batch = run_chats(solve, tasks, concurrency=64)             # asyncio, this process
    batch = run_chats(solve, tasks, backend="ray")              # workers on a Ray cluster
    batch.results, batch.errors, batch.usage, batch.cost

:func:`run_chats` returns a :class:`BatchResult`: the results in input order, each failed
chat's :class:`ChatError` beside them (a failure never loses the others' results), usage and
cost totals. Failed chats are retried when the failure is transient; a ``budget`` bounds the
whole batch; with a durable ``store`` an interrupted batch resumes where it stopped. Ray is
the ``batch`` extra (``pip install 'parley[batch]'``), imported only by a Ray batch. See
``website/docs/batch.md``.
"""

from __future__ import annotations

from ..exceptions import RayStartError
from ._item import BatchItem
from ._ray_backend import RayBackend, WorkerLostError
from ._result import BatchFailedError, BatchResult, ChatError
from ._retry import is_transient
from ._run_chats import a_run_chats, run_chats

__all__ = [
    "BatchFailedError",
    "BatchItem",
    "BatchResult",
    "ChatError",
    "RayBackend",
    "RayStartError",
    "WorkerLostError",
    "a_run_chats",
    "is_transient",
    "run_chats",
]
