"""What parley's two loggers share: AutoGen's nine arguments of ``log_chat_completion`` taken
once, as one :class:`Completion`, and :func:`record_method`, AutoGen's contract for every
``log_*`` call.

``BaseLogger.log_chat_completion`` keeps AutoGen's signature for users' loggers; parley's own
loggers derive from :class:`CompletionLogger`, which takes those arguments here and hands each
logger a ``Completion`` to write in its own form (a JSON line, a table row).
"""

from __future__ import annotations

import functools
import logging
import uuid
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from .._signatures import same_parameters
from ._records import from_listener
from ._secrets import scrub
from .base_logger import BaseLogger

__all__ = ["Completion", "CompletionLogger", "record_method"]

_log = logging.getLogger("parley.logger")
M = TypeVar("M", bound=Callable[..., None])


def record_method(method: M) -> M:
    """A logger's ``log_*`` method as AutoGen's behaved: an error is logged (``"[SqliteLogger]
    log_new_agent error: ..."``), never raised into the program; and, unless parley's listener
    is the caller (:data:`~parley.logger._records.from_listener`), the call returns once its
    record is written."""

    @functools.wraps(method)
    def logged(self: CompletionLogger, *args: Any, **kwargs: Any) -> None:
        try:
            method(self, *args, **kwargs)
        except Exception as error:
            # One preformatted text, as AutoGen logged it (code patching ``Logger.error`` reads
            # the first argument); scrubbed, as an error may quote what it failed on.
            text = scrub(f"[{type(self).__name__}] {method.__name__} error: {error}")
            _log.error(text)
        if not from_listener.get():
            self.flush()

    return logged  # type: ignore[return-value]


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
    @record_method
    def log_chat_completion(self, *args: Any, **kwargs: Any) -> None:
        # Completion's fields are the interface's parameters, in its order and with its names.
        self._log_completion(Completion(*args, **kwargs))

    @abstractmethod
    def _log_completion(self, completion: Completion) -> None:
        """Write ``completion`` (called from the thread doing the work: queue, don't block)."""

    @abstractmethod
    def flush(self) -> None:
        """Wait until every record queued so far is written."""
