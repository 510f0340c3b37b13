"""Try a request on each config in turn, keep the first response the filter accepts.

This is the edge of ``OpenAIWrapper``'s layers: the one place that sets the attributes AutoGen
code reads on a response (``cost`` and ``message_retrieval_function`` before the filter sees
it, ``config_id`` and ``pass_filter`` on the one returned), and that tells the observers (the
wrapper's usage summaries) about every response made or found in the cache.

An error that means "try elsewhere" (auth, rate limit, timeout, connection, 5xx, unknown model,
a body that is not JSON: :mod:`parley.oai._error_kinds` decides) moves on to the next config;
any other error propagates at once. A request with a typed ``response_format`` has each
reply checked against it, and asked again of the same config with the problems shown when it
does not conform (:mod:`parley.oai._typed_reply`; every such request is reported and counted). The last config's response is returned even if the filter
rejects it (``pass_filter`` says so). When several configs all fail, one
:class:`AllConfigsFailedError` lists every failure; a single config raises its own error
(``TimeoutError`` for a timeout, as AutoGen).
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple, NoReturn

from .._core import journal as _journal
from .._core import reports as _reports
from ..exceptions import AllConfigsFailedError, ConfigFailure
from ..usage import _run as _usage
from ._error_kinds import classify
from ._journal_calls import replayed_or_asked as _replayed_or_asked
from ._layers import Layer, Outcome
from ._slot import Attempt, Slot
from ._typed_reply import attach_parsed, typed_response

__all__ = ["Completed", "Fallback", "should_fall_back"]

logger = logging.getLogger("parley.oai.client")

_TIMEOUT_MESSAGE = (
    "OpenAI API call timed out. This could be due to congestion or too small a timeout value. "
    "The timeout can be specified by setting the 'timeout' value (in seconds) in the llm_config "
    "(if you are using agents) or the OpenAIWrapper constructor (if you are using the "
    "OpenAIWrapper directly)."
)


def should_fall_back(error: BaseException) -> bool:
    """Whether another config may succeed where this error ended one (the rules:
    :mod:`parley.oai._error_kinds`)."""
    return classify(error).fall_back


class Completed(NamedTuple):
    """A response a config's client made (``cached`` False) or the cache held for it, and
    its usage as the client reports it (``ModelClient.get_usage``)."""

    client: Any
    response: Any
    cached: bool
    usage: dict[str, Any]


class Fallback:
    """``await fallback(config)``: the response to ``create(**config)`` over ``configs``."""

    def __init__(self, configs: Sequence[tuple[Slot, Layer]], owner: Any = None) -> None:
        self._configs = list(configs)
        self._observers: list[Callable[[Completed], object]] = []
        self._owner = owner  # the OpenAIWrapper, for the reports of parley._core.reports

    def subscribe(self, observer: Callable[[Completed], object]) -> None:
        """Call ``observer`` with every response, before the filter judges it."""
        self._observers.append(observer)

    async def __call__(self, config: Mapping[str, Any]) -> Any:
        _usage.gate()  # a chat whose budget is spent makes no further request
        if _journal.current() is None:
            return await self.ask(config)
        return await _replayed_or_asked(self, config)

    async def ask(self, config: Mapping[str, Any], seen: list[Outcome] | None = None) -> Any:
        """The response to ``config``, asked of the configs in turn (no journal read: a
        durable chat's :func:`~parley.oai._journal_calls.replayed_or_asked` calls it when the
        journal has no record); ``seen`` gets the outcome it came with (the journal records
        whether the cache answered)."""
        failures: list[ConfigFailure] = []
        last = len(self._configs) - 1
        for index, (slot, layer) in enumerate(self._configs):
            attempt = slot.attempt(config)
            try:
                outcome = await self._one(attempt, index, layer)
                if attempt.schema is not None:
                    outcome = await self._typed(attempt, index, layer, outcome)
                response = outcome.response
            except Exception as error:
                kind = classify(error)
                if not kind.fall_back:
                    raise
                failures.append(ConfigFailure(index, attempt.params.get("model"), error))
                if index == last:
                    _raise_all_failed(failures)
                logger.info(
                    "config %d failed (%s, %s); trying the next one",
                    index,
                    type(error).__name__,
                    kind.reason,
                )
                continue
            passed = await _passes(attempt, response)
            if passed or index == last:
                response.config_id = index
                response.pass_filter = passed
                if seen is not None:
                    seen.append(outcome)
                return response
        raise RuntimeError("Should not reach here.")

    async def _one(self, attempt: Attempt, index: int, layer: Layer) -> Outcome:
        """One request of ``attempt`` through the config's layers, reported and counted."""
        start, t0 = time.time(), time.perf_counter()
        with _reports.llm_call_step(attempt, index, self._owner, _usage.charged_to) as report:
            outcome = await layer(attempt)
            response, usage = self._present(attempt, outcome, start, time.perf_counter() - t0)
            report.end(response=response, cost=outcome.cost, cached=outcome.cached, usage=usage)
        return outcome

    async def _typed(self, attempt: Attempt, index: int, layer: Layer, first: Outcome) -> Outcome:
        """``first`` once its reply conforms to the attempt's schema, else the answer to the
        request asked again with the problems shown (each a request of its own)."""
        assert attempt.schema is not None

        async def ask(params: dict[str, Any]) -> Outcome:
            return await self._one(replace(attempt, params=params), index, layer)

        return await typed_response(
            attempt.schema,
            attempt.params,
            attempt.options.structured_output_retries,
            first,
            lambda outcome: outcome.response,
            ask,
        )

    def replay(self, config: Mapping[str, Any], index: int, outcome: Outcome, passed: bool) -> Any:
        """A recorded response presented as config ``index`` made it (a durable chat's
        replay: usage and observers see it again, no request is sent)."""
        index = min(index, len(self._configs) - 1)
        slot, _ = self._configs[index]
        attempt = slot.attempt(config)
        with _reports.llm_call_step(
            attempt, index, self._owner, _usage.charged_to, replayed=True
        ) as report:
            response, usage = self._present(attempt, outcome, time.time(), 0.0)
            report.end(response=response, cost=outcome.cost, cached=outcome.cached, usage=usage)
        if attempt.schema is not None:
            attach_parsed(attempt.schema, response)  # the journal keeps the text, not the object
        response.config_id = index
        response.pass_filter = passed
        return response

    def _present(
        self, attempt: Attempt, outcome: Outcome, start: float, duration: float
    ) -> tuple[Any, dict[str, Any]]:
        response = outcome.response
        client = attempt.slot.client
        response.cost = outcome.cost
        response.message_retrieval_function = client.message_retrieval
        usage = client.get_usage(response)
        done = Completed(client, response, outcome.cached, usage)
        for observer in self._observers:
            observer(done)
        model = usage.get("model") or attempt.params.get("model") or "unknown"
        _usage.record_call(
            attempt.options.agent,
            str(model),
            usage,
            outcome.cost or 0.0,
            outcome.cached,
            start,
            duration,
        )
        return response, usage


async def _passes(attempt: Attempt, response: Any) -> bool:
    filter_func = attempt.options.filter_func
    if filter_func is None:
        return True
    verdict = filter_func(context=attempt.options.context, response=response)
    return bool(await verdict if inspect.isawaitable(verdict) else verdict)


def _raise_all_failed(failures: list[ConfigFailure]) -> NoReturn:
    import openai

    error = failures[-1].error
    if len(failures) == 1:
        if isinstance(error, openai.APITimeoutError):
            raise TimeoutError(_TIMEOUT_MESSAGE) from error
        raise error
    raise AllConfigsFailedError(failures) from error
