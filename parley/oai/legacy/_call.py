"""One legacy ``Completion`` request on one config: the disk cache, AutoGen's retry rules, and
the openai client of :mod:`parley.oai.providers._openai` (chat or text-completions endpoint).

Retry rules (``retry_wait_time``, ``max_retry_period``, ``request_timeout``), as FLAML's
``Completion`` had them, decided by the pure function :func:`next_wait`:

- a rate limit (429), a lost connection or a server error (5xx) waits ``retry_wait_time`` (or
  the server's ``Retry-After`` when longer) and retries while the retry period lasts;
- a timeout, when the config set no ``request_timeout`` of its own, retries with the timeout
  doubled (bounded by the time left); with its own ``request_timeout`` a timeout gives up;
- giving up raises the error, or returns ``-1`` when ``raise_on_ratelimit_or_timeout`` is false.

Unlike AutoGen, connection and server errors are retried only within ``max_retry_period`` too
(AutoGen retried them forever), so every request ends.

Responses are plain dicts (the SDK object's ``model_dump``) with a ``cost`` key, so code that
indexes ``response["choices"]`` keeps working; the cache stores them as JSON.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from typing import Any

from ..._core.runtime import dedicated_worker
from .._cache_io import close_disks_under, open_disk
from .._cache_key import cache_key
from .._error_kinds import Cause, ErrorKind, classify
from .._retry import parse_retry_after
from ._params import Request

__all__ = ["GAVE_UP", "cache_lookup", "cache_store", "clear_cache_dir", "next_wait", "send"]

logger = logging.getLogger("parley.oai.completion")

GAVE_UP = -1
_worker = dedicated_worker("parley-cache")  # the thread that owns the open disk caches


def next_wait(
    kind: str,
    *,
    elapsed: float,
    retry_wait_time: float,
    max_retry_period: float,
    timeout: float,
    explicit_timeout: bool,
    retry_after: float | None = None,
) -> tuple[float, float] | None:
    """``(seconds to wait, timeout of the next attempt)`` after a failed attempt, or None to
    give up. ``kind`` is ``"timeout"`` or ``"transient"`` (rate limit, connection, 5xx)."""
    wait = max(retry_wait_time, retry_after or 0.0)
    time_left = max_retry_period - (elapsed + wait)
    if kind == "timeout":
        if explicit_timeout or time_left <= timeout:
            return None
        return wait, min(timeout * 2, time_left)
    if time_left <= 0:
        return None
    return wait, timeout


# What FLAML's Completion retried: no 408 or 409 (the client's retry takes those), no answer
# that is no reply, and the server's ``x-should-retry`` unread.
_RETRIED = frozenset({Cause.THROTTLED, Cause.UNREACHABLE, Cause.SERVER})


def _kind(error: ErrorKind) -> str | None:
    if not error.api:
        return None
    if error.cause is Cause.TIMEOUT:
        return "timeout"
    return "transient" if error.cause in _RETRIED else None


def _client(request: Request) -> Any:
    from ..providers._openai import OpenAIClient

    return OpenAIClient(
        request.client_kwargs, api_type=request.api_type, api_version=request.api_version
    )


async def send(
    request: Request,
    *,
    retry_wait_time: float,
    max_retry_period: float,
    request_timeout: float,
    raise_on_ratelimit_or_timeout: bool,
    on_give_up: Callable[[str], None],
    sleep: Callable[[float], Any] = asyncio.sleep,
) -> dict[str, Any] | int:
    """The response to ``request`` as a dict, or :data:`GAVE_UP` (-1) when the retry period
    ran out and ``raise_on_ratelimit_or_timeout`` is false; ``on_give_up(kind)`` is told so."""
    client = _client(request)
    call = client.a_create if request.chat else client.a_create_completion
    explicit = "request_timeout" in request.options
    timeout = float(request.options.get("request_timeout", request_timeout))
    start = time.monotonic()
    while True:
        try:
            response = await call({**request.body, "timeout": timeout})
        except Exception as error:
            classified = classify(error)
            kind = _kind(classified)
            if kind is None:
                raise
            decision = next_wait(
                kind,
                elapsed=time.monotonic() - start,
                retry_wait_time=retry_wait_time,
                max_retry_period=max_retry_period,
                timeout=timeout,
                explicit_timeout=explicit,
                retry_after=parse_retry_after(classified.headers),
            )
            if decision is None:
                if raise_on_ratelimit_or_timeout:
                    raise
                logger.warning(
                    "Failed to get response from openai api due to getting RateLimitError or "
                    "Timeout for %s seconds.",
                    max_retry_period,
                )
                on_give_up(kind)
                return GAVE_UP
            wait, timeout = decision
            logger.info("%s; retrying in %s seconds...", type(error).__name__, wait)
            await sleep(wait)
            continue
        return dict(response.model_dump(mode="json", exclude_none=True))


# -- the disk cache: <root>/<seed>, opened by _cache_io on parley's cache thread -------------


def _key(request: Request) -> str:
    return cache_key(request.body)


async def cache_lookup(path: str, request: Request) -> Any:
    """The cached response to ``request`` under ``path`` (a dict, or -1), or None."""
    return await _worker.run(lambda: open_disk(path).get(_key(request), None))


async def cache_store(path: str, request: Request, response: dict[str, Any] | int) -> None:
    await _worker.run(lambda: open_disk(path).set(_key(request), response))


async def clear_cache_dir(root: str, seed: Any) -> None:
    """Empty the cache ``<root>/<seed>``; with ``seed`` None, delete ``root`` altogether."""

    def clear() -> None:
        if seed is None:
            import shutil

            close_disks_under(root)
            shutil.rmtree(root, ignore_errors=True)
        else:
            open_disk(os.path.join(root, str(seed))).cache.clear()

    await _worker.run(clear)
