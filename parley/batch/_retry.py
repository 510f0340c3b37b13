"""Which failed chats a batch tries again: those whose failure says "later may work"."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["RetryOn", "backoff", "is_transient", "retryable"]

RetryOn = Callable[[BaseException], bool] | tuple[type[BaseException], ...]

# HTTP statuses after which the same request may succeed: timeout, conflict, throttling, and
# the server's own failures (5xx).
_TRANSIENT_STATUS = frozenset({408, 409, 429})


def is_transient(error: BaseException) -> bool:
    """The default ``retry_on``: the model could not be reached or was overloaded.

    True for a connection that failed or timed out (``ConnectionError``, ``TimeoutError``,
    openai's ``APIConnectionError`` and ``APITimeoutError``, parley's
    ``ModelConnectionError``), an HTTP 408, 409, 429 or 5xx answer (openai's
    ``RateLimitError`` and ``InternalServerError``, parley's ``RateLimitError`` and
    ``ModelServerError``, anything with such a ``status_code``), and
    ``AllConfigsFailedError`` when every config failed so. The model client has already
    retried each request by then (its ``max_retries``); a batch retry runs the whole chat
    again (a durable chat resumes where it stopped). Everything else (a bad request, a
    refused key, a bug in the factory, a paused chat) fails the chat at once.
    """
    from ..exceptions import AllConfigsFailedError, ModelConnectionError

    if isinstance(error, AllConfigsFailedError):
        return bool(error.failures) and all(is_transient(f.error) for f in error.failures)
    if isinstance(error, (ConnectionError, TimeoutError, asyncio.TimeoutError)):
        return True
    if isinstance(error, ModelConnectionError):
        return True
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        return status in _TRANSIENT_STATUS or status >= 500
    import openai  # parley's dependency; imported here for the check only

    return isinstance(error, openai.APIConnectionError)  # APITimeoutError included


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
