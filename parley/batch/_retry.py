"""Which failed chats a batch tries again: those whose failure says "later may work"."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..oai import _error_kinds

__all__ = ["RetryOn", "backoff", "is_transient", "retryable"]

RetryOn = Callable[[BaseException], bool] | tuple[type[BaseException], ...]


def is_transient(error: BaseException) -> bool:
    """The default ``retry_on``: the model could not be reached or was overloaded.

    True for a connection that failed or timed out (``ConnectionError``, ``TimeoutError``,
    openai's ``APIConnectionError`` and ``APITimeoutError``, parley's
    ``ModelConnectionError``), an HTTP 408, 409, 429 or 5xx answer (openai's
    ``RateLimitError`` and ``InternalServerError``, parley's ``RateLimitError`` and
    ``ModelServerError``, anything with such a ``status_code``), an answer that was no reply
    (parley's ``MalformedResponseError``), an answer whose ``x-should-retry`` header said
    "true", and ``AllConfigsFailedError`` when every config failed so. A content filter's
    refusal is not transient. The model client has already retried each request by then (its
    ``max_retries``); a batch retry runs the whole chat again (a durable chat resumes where
    it stopped). Everything else (a bad request, a refused key, a bug in the factory, a
    paused chat) fails the chat at once. The rules are the model client's own
    (:mod:`parley.oai._error_kinds`).
    """
    return _error_kinds.is_transient(error)


def retryable(retry_on: RetryOn, error: BaseException) -> bool:
    """Whether ``retry_on`` (a predicate or exception classes) deems ``error`` retryable; a
    predicate that raises counts as "no" (its error would hide the chat's)."""
    if isinstance(error, (KeyboardInterrupt, SystemExit, asyncio.CancelledError)):
        return False
    if isinstance(retry_on, tuple):
        return isinstance(error, retry_on)
    try:
        return bool(retry_on(error))
    except Exception:
        return False


def backoff(attempt: int) -> float:
    """Seconds to wait before try ``attempt + 1``: 0.5, 1, 2, ... up to 10 (the client has
    waited between its own retries already; this spaces whole chats)."""
    return float(min(10.0, 0.5 * 2 ** (attempt - 1)))
