"""``BaseLogger``: what a runtime logger implements (AutoGen's interface, unchanged).

:mod:`parley.runtime_logging` calls these methods while logging is on; pass an instance of
your own subclass to ``runtime_logging.start(logger=...)`` to send the records elsewhere. The
calls come from the thread doing the work (the event loop, or a worker thread running a sync
tool), concurrently from many chats: keep them quick and thread-safe. parley's loggers only
queue a chat's record there and write it from a thread of their own (a call from your code
returns once its record is written, as in AutoGen).

Besides AutoGen's records, parley calls ``log_event`` with ``"chat_start"``, ``"chat_end"`` and
``"code_execution"`` (see :mod:`parley.runtime_logging`).
"""

from __future__ import annotations

import sqlite3
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["BaseLogger", "ConfigItem", "LLMConfig"]

F = TypeVar("F", bound=Callable[..., Any])
ConfigItem = dict[str, str | list[str]]
LLMConfig = dict[str, float | int | ConfigItem | list[ConfigItem] | None]


class BaseLogger(ABC):
    """A runtime logger (see the module docstring)."""

    @abstractmethod
    def start(self) -> str:
        """Open the log and start recording; returns the session id (a uuid4 string)."""

    @abstractmethod
    def log_chat_completion(
        self,
        invocation_id: uuid.UUID,
        client_id: int,
        wrapper_id: int,
        source: Any,
        request: dict[str, Any],
        response: Any,
        is_cached: int,
        cost: float,
        start_time: str,
    ) -> None:
        """One model call (or cache hit) made by ``source`` (an agent, or the
        ``OpenAIWrapper`` when ``create`` was called without ``agent=``): the request without
        credentials, the response, ``is_cached`` 1 or 0, its cost in USD and when it started
        (``logger_utils.get_current_ts()``'s format)."""

    @abstractmethod
    def log_new_agent(self, agent: Any, init_args: dict[str, Any]) -> None:
        """An agent was made with these constructor arguments."""

    @abstractmethod
    def log_event(self, source: Any, name: str, **kwargs: Any) -> None:
        """Event ``name`` about ``source`` (an agent or a name), with its data."""

    @abstractmethod
    def log_new_wrapper(self, wrapper: Any, init_args: dict[str, Any]) -> None:
        """An ``OpenAIWrapper`` was made with these arguments."""

    @abstractmethod
    def log_new_client(self, client: Any, wrapper: Any, init_args: dict[str, Any]) -> None:
        """A model client was made for ``wrapper`` from this config entry."""

    @abstractmethod
    def log_function_use(
        self, source: Any, function: Any, args: dict[str, Any], returns: Any
    ) -> None:
        """``source`` ran a registered function (a tool) with ``args``; it returned ``returns``."""

    @abstractmethod
    def stop(self) -> None:
        """Write what is pending, close the log and stop recording."""

    @abstractmethod
    def get_connection(self) -> sqlite3.Connection | None:
        """A connection to the logging database (None for loggers without one)."""
