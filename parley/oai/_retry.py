"""Retry policy for one config: small pure functions, and the loop that applies them.

The decisions (``should_retry``, ``parse_retry_after``, ``retry_delay``) are pure so they can be
tested alone; :func:`call_with_retries` is the only place that sleeps. The openai client's own
retries are switched off (``max_retries=0``) so that exactly this policy applies.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ..exceptions import ModelAPIError
from ._error_kinds import classify

__all__ = [
    "RetryPolicy",
    "call_with_retries",
    "parse_retry_after",
    "retry_delay",
    "should_retry",
]

logger = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How one config retries a failed request before the wrapper moves on to the next config.

    ``max_retries`` retries follow the first attempt; waits grow from ``initial_delay`` by
    ``multiplier`` up to ``max_delay``, with +-``jitter`` (a fraction) so that many clients do
    not retry in lockstep. ``budget`` caps the seconds spent waiting in all: a wait that would
    exceed it (a long ``Retry-After``, say) ends the retries at once.
    """

    max_retries: int = 2
    initial_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 8.0
    jitter: float = 0.25
    budget: float = 60.0


def should_retry(error: BaseException) -> bool:
    """Whether retrying the same request on the same config may succeed (the rules:
    :mod:`parley.oai._error_kinds`)."""
    return classify(error).retry


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, ``Retry-After`` in seconds or as
    an HTTP-date. None when absent or unparsable; never negative."""
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        import email.utils  # only for an HTTP-date Retry-After (8 ms to import)

        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def retry_delay(
    policy: RetryPolicy,
    attempt: int,
    retry_after: float | None = None,
    rand: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait before retry number ``attempt`` (1 for the first retry).

    A server's ``Retry-After`` wins over the backoff; otherwise exponential backoff with jitter.
    """
    if retry_after is not None:
        return retry_after
    base = min(policy.max_delay, policy.initial_delay * policy.multiplier ** (attempt - 1))
    return max(0.0, base * (1 + policy.jitter * (2 * rand() - 1)))


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    describe: str = "request",
    max_wait: float | None = None,
) -> T:
    """Await ``call()``, retrying as ``policy`` says; the last error propagates.

    ``max_wait`` bounds a single wait: the wrapper passes ``policy.max_delay`` when another
    config could serve the request, so a server asking for a long pause sends us elsewhere
    instead of keeping us asleep.
    """
    waited = 0.0
    attempt = 0
    while True:
        try:
            return await call()
        except Exception as error:
            attempt += 1
            kind = classify(error)
            if attempt > policy.max_retries or not kind.retry:
                raise
            hinted = parse_retry_after(kind.headers)
            if hinted is None and isinstance(error, ModelAPIError):
                hinted = error.retry_after
            delay = retry_delay(policy, attempt, hinted)
            if waited + delay > policy.budget or (max_wait is not None and delay > max_wait):
                logger.info("%s: not retrying, a wait of %.1f s is too long", describe, delay)
                raise
            logger.info(
                "%s failed (%s, %s); retry %d of %d in %.2f s",
                describe,
                type(error).__name__,
                kind.reason,
                attempt,
                policy.max_retries,
                delay,
            )
            await sleep(delay)
            waited += delay
