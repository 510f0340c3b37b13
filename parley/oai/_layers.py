"""The layers of one config's request, each with one job, composed over the ``ModelClient``.

Every layer is an async callable ``(Attempt) -> Outcome`` wrapping the next one; :func:`stack`
composes them for a config, outermost first:

- :class:`Cached`: answer from the cache, or ask the layers below and store what they return;
- :class:`Priced`: the dollar cost of a response from the model;
- :class:`RateLimited`: the config's ``api_rate_limit`` (once per request, as AutoGen's
  limiter, not per retry);
- :class:`Retrying`: the config's retry policy (:mod:`parley.oai._retry`);
- :class:`ClientCall`: the model client itself.

Layers pass values along in the :class:`Outcome`; none of them touches the response object.
Trying configs in turn is the layer above (:mod:`parley.oai._fallback`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .._core.runtime import to_thread
from .._credentials import scrub_error
from . import _cache_io
from ._cache_key import KeyHasher
from ._cost import compute_cost
from ._retry import RetryPolicy, call_with_retries
from ._slot import Attempt, Slot
from .rate_limiters import TimeRateLimiter

__all__ = [
    "Cached",
    "ClientCall",
    "Layer",
    "Outcome",
    "Priced",
    "RateLimited",
    "Retrying",
    "cost_of",
    "stack",
]


@dataclass(slots=True)
class Outcome:
    """A response and what is known about it: its cost (None until priced), whether it came
    from the cache."""

    response: Any
    cost: float | None = None
    cached: bool = False


Layer = Callable[[Attempt], Awaitable[Outcome]]


class ClientCall:
    """Ask the config's model client: its ``a_create`` coroutine if it has one, else its
    blocking ``create`` in a worker thread, so that it never stalls the event loop. An error
    leaves it scrubbed of the configured credentials (a custom client's too)."""

    async def __call__(self, attempt: Attempt) -> Outcome:
        try:
            return await self._ask(attempt)
        except Exception as e:
            scrub_error(e)
            raise

    @staticmethod
    async def _ask(attempt: Attempt) -> Outcome:
        client = attempt.slot.client
        a_create = getattr(client, "a_create", None)
        if a_create is not None and inspect.iscoroutinefunction(a_create):
            return Outcome(await a_create(attempt.params))
        response = await to_thread(client.create, attempt.params)
        return Outcome(await response if inspect.isawaitable(response) else response)


class RateLimited:
    def __init__(self, inner: Layer, limiter: TimeRateLimiter) -> None:
        self._inner = inner
        self._limiter = limiter

    async def __call__(self, attempt: Attempt) -> Outcome:
        await self._limiter.a_sleep()
        return await self._inner(attempt)


class Retrying:
    """Retry as ``policy`` says. ``max_wait`` bounds one wait: when another config could serve
    the request, a server asking for a long pause sends it there instead."""

    def __init__(self, inner: Layer, policy: RetryPolicy, max_wait: float | None) -> None:
        self._inner = inner
        self._policy = policy
        self._max_wait = max_wait

    async def __call__(self, attempt: Attempt) -> Outcome:
        return await call_with_retries(
            lambda: self._inner(attempt),
            self._policy,
            describe=f"config {attempt.slot.index} ({attempt.params.get('model')!r})",
            max_wait=self._max_wait,
        )


def cost_of(attempt: Attempt, response: Any) -> float:
    """The dollar cost of ``response``: by the request's ``price`` (per 1k prompt and
    completion tokens) if it has one, else by its client."""
    price = attempt.options.price
    if price is None:
        return float(attempt.slot.client.cost(response))
    usage = getattr(response, "usage", None)
    if usage is None:
        return 0.0
    return compute_cost(response.model, usage.prompt_tokens, usage.completion_tokens or 0, price)


class Priced:
    def __init__(self, inner: Layer) -> None:
        self._inner = inner

    async def __call__(self, attempt: Attempt) -> Outcome:
        outcome = await self._inner(attempt)
        if outcome.cost is None:
            outcome.cost = cost_of(attempt, outcome.response)
        return outcome


class Cached:
    """The request's ``cache`` (or the disk cache its ``cache_seed`` names): a hit is the
    answer, a miss asks the layers below and stores their response with its cost."""

    def __init__(self, inner: Layer) -> None:
        self._inner = inner
        self._keys = KeyHasher()

    async def __call__(self, attempt: Attempt) -> Outcome:
        where = _cache_io.location(attempt.options.cache, attempt.options.cache_seed)
        if where is None:
            return await self._inner(attempt)
        key = self._keys.key(attempt.params)
        hit = await _cache_io.lookup(where, key)
        if hit is not None:
            response, cost = hit
            return Outcome(response, cost_of(attempt, response) if cost is None else cost, True)
        outcome = await self._inner(attempt)
        await _cache_io.store(where, key, outcome.response, outcome.cost)
        return outcome


def stack(slot: Slot, *, last: bool) -> Layer:
    """The layers of ``slot``'s requests; ``last`` when no config follows it."""
    layer: Layer = Retrying(ClientCall(), slot.policy, None if last else slot.policy.max_delay)
    if slot.limiter is not None:
        layer = RateLimited(layer, slot.limiter)
    return Cached(Priced(layer))
