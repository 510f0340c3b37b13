"""AutoGen's nine arguments of ``log_chat_completion`` taken once, as one :class:`Completion`.

``BaseLogger.log_chat_completion`` keeps AutoGen's signature for users' loggers; parley's own
loggers derive from :class:`CompletionLogger`, which takes those arguments here and hands each
logger a ``Completion`` to write in its own form (a JSON line, a table row).
"""

from __future__ import annotations

import uuid
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any

from .._signatures import same_parameters
from .base_logger import BaseLogger

__all__ = ["Completion", "CompletionLogger"]


@dataclass(frozen=True)
class Completion:
    """One model call (or cache hit) as ``BaseLogger.log_chat_completion`` describes it."""

    invocation_id: uuid.UUID
    client_id: int
    wrapper_id: int
    source: Any
    request: dict[str, Any]
    response: Any
    is_cached: int
    cost: float
    start_time: str


class CompletionLogger(BaseLogger):
    """A ``BaseLogger`` that writes each completion from one :class:`Completion`."""

    @same_parameters(BaseLogger.log_chat_completion)
    def log_chat_completion(self, *args: Any, **kwargs: Any) -> None:
        # Completion's fields are the interface's parameters, in its order and with its names.
        self._log_completion(Completion(*args, **kwargs))

    @abstractmethod
    def _log_completion(self, completion: Completion) -> None:
        """Write ``completion`` (called from the thread doing the work: queue, don't block)."""
