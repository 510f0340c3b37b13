"""Runtime logging (AutoGen's ``autogen.runtime_logging``): record what agents do in a SQLite
database or a JSON-lines file while the program runs.

``session_id = runtime_logging.start(config={"dbname": "logs.db"})`` starts it (``logger_type=
"file"`` for ``./autogen_logs/runtime.log``; ``logger=`` for your own
``parley.logger.base_logger.BaseLogger``); ``runtime_logging.stop()`` writes what is pending
and stops. ``parley logs logs.db`` lists the chats logged there and shows one.

What is recorded, as AutoGen records it: agents, ``OpenAIWrapper`` objects and model clients
as they are made (their arguments without credentials); every model call and cache hit
(``log_chat_completion``; the source is the agent, or the wrapper when ``create`` was called
without ``agent=``); every received message (event ``received_message``) and reply function
run (``reply_func_executed``); every tool call (``log_function_use``). parley adds the events
``chat_start`` / ``chat_end`` (ids linking nested chats to their parent, the termination reason,
the cost as ``ChatResult.cost``) and ``code_execution``. Credentials are never written.

parley's core does not call this module: it reports to ``parley._core.events`` listeners, and
:func:`start` registers one that turns the reports into the calls above. The ``log_*``
functions are AutoGen's hooks, forwarding to the active logger, for code that calls them.

Differences from AutoGen (its known flaws): a logger whose ``start()`` fails raises its error
here (AutoGen's handler itself crashed); ``start`` while logging stops the running logger
first; a call to ``OpenAIWrapper.create`` without ``agent=`` is logged with the wrapper as its
source (AutoGen raised ``AttributeError``).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import uuid
from typing import Any, Literal

from ._core import events as _events
from .logger.base_logger import BaseLogger
from .logger.logger_factory import LoggerFactory

__all__ = [
    "get_connection",
    "log_chat_completion",
    "log_event",
    "log_function_use",
    "log_new_agent",
    "log_new_client",
    "log_new_wrapper",
    "logging_enabled",
    "start",
    "stop",
]

_log = logging.getLogger(__name__)

autogen_logger: BaseLogger | None = None
is_logging = False
_listener: _events.Listener | None = None
_lock = threading.Lock()


def start(
    logger: BaseLogger | None = None,
    logger_type: Literal["sqlite", "file"] = "sqlite",
    config: dict[str, Any] | None = None,
) -> str:
    """Start logging with ``logger``, or a new logger of ``logger_type`` configured by
    ``config``; returns the session id. A logger already running is stopped first. What the
    logger's ``start()`` raises is logged and raised."""
    global autogen_logger, is_logging, _listener
    from .logger._listener import Reporter

    with _lock:
        _stop_locked()
        chosen = logger if logger is not None else LoggerFactory.get_logger(logger_type, config)
        try:
            session_id = chosen.start()
        except Exception as error:
            _log.error("[runtime logging] Failed to start logging: %s", error)
            raise
        autogen_logger = chosen
        is_logging = True
        _listener = Reporter(chosen)
        _events.add_listener(_listener)
        return session_id


def stop() -> None:
    """Stop logging: no more records; the logger writes what is pending and closes."""
    with _lock:
        _stop_locked()


def _stop_locked() -> None:
    global is_logging, _listener
    if _listener is not None:
        _events.remove_listener(_listener)
        _listener = None
    if is_logging and autogen_logger is not None:
        autogen_logger.stop()
    is_logging = False


def get_connection() -> sqlite3.Connection | None:
    """The logger's database connection (None for a file logger, or once stopped)."""
    if autogen_logger is None:
        _log.error("[runtime logging] get_connection: autogen logger is None")
        return None
    return autogen_logger.get_connection()


def logging_enabled() -> bool:
    """Whether logging is on."""
    return is_logging


# -- AutoGen's hooks -------------------------------------------------------------------------


def _active(hook: str) -> BaseLogger | None:
    if autogen_logger is None:
        _log.error("[runtime logging] %s: autogen logger is None", hook)
    return autogen_logger


def log_chat_completion(
    invocation_id: uuid.UUID,
    client_id: int,
    wrapper_id: int,
    agent: Any,
    request: dict[str, Any],
    response: Any,
    is_cached: int,
    cost: float,
    start_time: str,
) -> None:
    target = _active("log_chat_completion")
    if target is not None:
        target.log_chat_completion(
            invocation_id,
            client_id,
            wrapper_id,
            agent,
            request,
            response,
            is_cached,
            cost,
            start_time,
        )


def log_new_agent(agent: Any, init_args: dict[str, Any]) -> None:
    target = _active("log_new_agent")
    if target is not None:
        target.log_new_agent(agent, init_args)


def log_event(source: Any, name: str, **kwargs: Any) -> None:
    target = _active("log_event")
    if target is not None:
        target.log_event(source, name, **kwargs)


def log_function_use(agent: Any, function: Any, args: dict[str, Any], returns: Any) -> None:
    target = _active("log_function_use")
    if target is not None:
        target.log_function_use(agent, function, args, returns)


def log_new_wrapper(wrapper: Any, init_args: dict[str, Any]) -> None:
    target = _active("log_new_wrapper")
    if target is not None:
        target.log_new_wrapper(wrapper, init_args)


def log_new_client(client: Any, wrapper: Any, init_args: dict[str, Any]) -> None:
    target = _active("log_new_client")
    if target is not None:
        target.log_new_client(client, wrapper, init_args)
