"""One trial of ``Completion.tune``: ask the model for a config's completions on the data and
score them with ``eval_func``, spending as little as the pruning rules allow.

With an inference budget the trial grows its number of completions ``n`` exponentially (each
round asks only for the completions it does not have yet) and reads the data progressively (1,
2, 4, ... instances), stopping as soon as the mean output tokens prove the config over budget,
and moving on to the next ``n`` as soon as they prove the current one within it. Without a budget
it asks for the configured ``n`` on every instance at once.

The instances of one round are requested concurrently (``max_concurrency`` in flight) on
parley's event loop; their answers are kept in instance order, so the outcome never depends on
which reply came first. ``eval_func`` (user code, maybe slow) runs in the caller's thread.
"""

from __future__ import annotations

import logging
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..._core.runtime import run_sync
from .._gather import gather_bounded
from ._tune_budget import SpendGuard, worst_case_cost
from ._tune_prune import PruneState, sample_margin, target_output_tokens
from ._tune_space import SearchProblem, TrialRequest, plain

__all__ = ["TrialEvaluator", "TuneSettings"]

logger = logging.getLogger("parley.oai.completion")


@dataclass(frozen=True)
class TuneSettings:
    """The fixed inputs of one tuning run."""

    data: Sequence[Mapping[str, Any]]
    metric: str
    mode: str
    eval_func: Callable[..., Mapping[str, Any]]
    inference_budget: float | None
    optimization_budget: float | None
    max_concurrency: int


@dataclass
class _Answers:
    """The completions one instance holds so far in a trial."""

    count: int = 0
    texts: list[Any] = field(default_factory=list)
    output_tokens: int = 0
    input_tokens: int = 0  # of one request: every round pays for the input again


class _Stop(Exception):
    """Ends a trial early with ``result``."""

    def __init__(self, result: dict[str, Any]) -> None:
        self.result = result


class TrialEvaluator:
    """Evaluates trials for one run; ``state`` is the run's :class:`PruneState` (the runner
    replaces it when it replays a log)."""

    def __init__(
        self,
        completion_cls: Any,
        problem: SearchProblem,
        settings: TuneSettings,
        input_estimates: Mapping[tuple[str, int | None], float],
    ) -> None:
        # completion_cls: Completion or ChatCompletion (a_create, extract_text_or_function_call,
        # price_of, is_chat_model, cache_seed); typed Any as this module must not import it.
        self.cls = completion_cls
        self.problem = problem
        self.settings = settings
        self.input_estimates = input_estimates
        self.state = PruneState()
        self.guard = SpendGuard(settings.optimization_budget, lambda: self.state.total_cost)

    # -- one trial ---------------------------------------------------------------------------

    def __call__(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """The result of the trial ``config``: the metrics averaged over the data, ``cost``
        (what the trial spent), ``total_cost`` (the run so far) and ``inference_cost`` (the
        mean cost of one instance's request)."""
        request = self.problem.request(config)
        spent = [0.0]
        try:
            answers = run_sync(self._collect(request, spent))
        except _Stop as stop:
            return stop.result
        return self._score(request, answers, spent[0])

    def _rejected(self, spent: float) -> dict[str, Any]:
        # The worst value of the metric: AutoGen reported 0, which is the best one for "min".
        worst = math.inf if self.settings.mode == "min" else -math.inf
        return {
            self.settings.metric: worst,
            "inference_cost": math.inf,
            "total_cost": self.state.total_cost,
            "cost": spent,
        }

    def _price(self, request: TrialRequest) -> tuple[float, float]:
        # The first config-list entry answers unless it fails: its price is the trial's.
        price = self.cls.price_of(*request.served_by()[0])
        return (0.0, 0.0) if price is None else (float(price[0]), float(price[1]))

    def _max_tokens(self, request: TrialRequest) -> float:
        limit = request.params.get("max_tokens")
        if limit is not None:
            return float(limit)
        # The API's own defaults: chat answers are unbounded, text completions stop at 16.
        return math.inf if self.cls.is_chat_model(request.model) else 16.0

    def _target(self, request: TrialRequest) -> float | None:
        """The output tokens per instance the inference budget buys, None without a budget."""
        budget = self.settings.inference_budget
        if budget is None:
            return None
        tokens = self.state.input_tokens.get(request.template)
        if tokens is None:
            tokens = self.input_estimates.get(request.template, 0.0)
        return target_output_tokens(budget, tokens, self._price(request))

    def _affordable(self, request: TrialRequest, target: float, max_tokens: float) -> int:
        """The largest ``n`` proven within budget for this request's region and max_tokens."""
        valid = self.state.largest_valid(request.region, max_tokens)
        if target == math.inf:
            return request.completions
        if math.isfinite(max_tokens) and max_tokens > 0:
            # n answers of at most max_tokens each cannot cost more than the target.
            valid = max(valid, int(target // max_tokens))
        return valid

    async def _collect(self, request: TrialRequest, spent: list[float]) -> list[_Answers]:
        data = self.settings.data
        total = len(data)
        wanted = request.completions
        max_tokens = self._max_tokens(request)
        target = self._target(request)
        if self._over_budget():
            raise _Stop(self._rejected(0.0))
        # Read the data progressively only while the cost is in doubt: a config already proven
        # within budget asks for every instance at once (all of them concurrently).
        n, progressive = wanted, False
        if target is not None:
            if target <= 0:
                raise _Stop(self._rejected(0.0))  # the input alone costs the budget
            valid = self._affordable(request, target, max_tokens)
            if wanted > valid:
                invalid = self.state.smallest_invalid(request.region, max_tokens)
                if invalid is not None and wanted >= invalid:
                    raise _Stop(self._rejected(0.0))  # proven over budget: no request
                n, progressive = valid + 1, True
        answers = [_Answers() for _ in data]
        while True:
            used = 1 if progressive else total
            while True:
                await self._fill(request, answers[:used], n, spent, max_tokens)
                if progressive:
                    assert target is not None
                    mean = math.fsum(a.output_tokens for a in answers[:used]) / used
                    margin = sample_margin(used, total)
                    if mean > target * (1 + margin):
                        self.state.mark_invalid(request.region, max_tokens, n)
                        raise _Stop(self._rejected(spent[0]))
                    if mean < target * (1 - margin) and (n < wanted or used == total):
                        self.state.mark_valid(request.region, max_tokens, n)
                        if n < wanted:
                            break  # this n is affordable: try the next one
                if used == total:
                    break
                used = min(2 * used, total)
            if n >= wanted:
                return answers
            n = min(2 * n, wanted)

    async def _fill(
        self,
        request: TrialRequest,
        answers: list[_Answers],
        n: int,
        spent: list[float],
        max_tokens: float,
    ) -> None:
        """Bring every instance of ``answers`` to ``n`` completions, concurrently."""
        jobs = [(i, a.count, n - a.count) for i, a in enumerate(answers) if a.count < n]

        async def ask(job: tuple[int, int, int]) -> Any:
            index, _, count = job
            worst = 0.0
            if self.settings.optimization_budget is not None:
                worst = worst_case_cost(
                    request,
                    self.settings.data[index],
                    count,
                    is_chat_model=self.cls.is_chat_model,
                    price_of=self.cls.price_of,
                )
            if not self.guard.reserve(worst, f"a request for data[{index}] ({count} answers)"):
                return None  # not sent: the optimization budget cannot cover it
            try:
                response = await self._ask(request, *job)
                if isinstance(response, Mapping):
                    cost = float(response.get("cost", 0.0))
                    self.state.total_cost += cost
                    spent[0] += cost
                    if cost > worst and self.settings.optimization_budget is not None:
                        logger.warning(
                            "a tune request cost %.6f USD, more than the %.6f USD reserved for "
                            "it (the provider billed more prompt tokens than parley counted)",
                            cost,
                            worst,
                        )
            finally:
                self.guard.release(worst)
            return response

        responses = await gather_bounded(ask, jobs, self.settings.max_concurrency)
        # In instance order, after every reply is in: the outcome does not depend on timing.
        for (index, _, count), response in zip(jobs, responses, strict=True):
            if response is None:
                raise _Stop(self._rejected(spent[0]))
            if not isinstance(response, Mapping):  # -1: rate limits or timeouts outlasted retries
                if self.settings.inference_budget is not None:
                    self.state.mark_invalid(request.region, max_tokens, n)
                raise _Stop(self._rejected(spent[0]))
            held = answers[index]
            usage = response.get("usage") or {}
            if held.count == 0:
                held.input_tokens = int(usage.get("prompt_tokens") or 0)
            held.output_tokens += int(usage.get("completion_tokens") or 0)
            held.texts.extend(self.cls.extract_text_or_function_call(response))
            held.count += count
        if self._over_budget():
            raise _Stop(self._rejected(spent[0]))

    async def _ask(self, request: TrialRequest, index: int, held: int, count: int) -> Any:
        params = {**request.params, request.prune_hp: count}
        if held:
            # The completions after the first ``held`` are a new sample, not a repeat of the
            # first request of that size: give them their own cache, so that neither the
            # cache nor a resumed run hands back the same completions twice.
            seed = params.get("cache_seed", self.cls.cache_seed)
            if seed is not None:
                params["cache_seed"] = f"{seed}+{held}"
        return await self.cls.a_create(
            dict(self.settings.data[index]),
            use_cache=True,
            config_list=request.config_list,
            raise_on_ratelimit_or_timeout=False,
            **params,
        )

    def _over_budget(self) -> bool:
        return self.guard.exhausted()

    # -- scoring -----------------------------------------------------------------------------

    def _score(
        self, request: TrialRequest, answers: list[_Answers], spent: float
    ) -> dict[str, Any]:
        settings = self.settings
        results = [
            settings.eval_func(a.texts, **instance)
            for a, instance in zip(answers, settings.data, strict=True)
        ]
        metrics = _average(results, settings.metric)
        count = len(answers)
        input_tokens = math.fsum(a.input_tokens for a in answers) / count
        output_tokens = math.fsum(a.output_tokens for a in answers) / count
        self.state.input_tokens.setdefault(request.template, input_tokens)
        in_price, out_price = self._price(request)
        return {
            **metrics,
            "inference_cost": (input_tokens * in_price + output_tokens * out_price) / 1000,
            "total_cost": self.state.total_cost,
            "cost": spent,
        }


def _average(results: list[Mapping[str, Any]], metric: str) -> dict[str, float]:
    """The mean of every numeric metric ``eval_func`` returned (text such as a voted answer is
    left out); ValueError when ``metric`` is missing, TypeError when it is not a number."""
    for i, result in enumerate(results):
        if not isinstance(result, Mapping):
            raise TypeError(
                f"eval_func must return a dict of metrics, got {type(result).__name__} "
                f"for data instance {i}"
            )
        if metric not in result:
            raise ValueError(
                f"eval_func returned no {metric!r} metric for data instance {i} (it returned "
                f"{sorted(result)}); tune(metric=...) must name one of eval_func's keys"
            )
    out: dict[str, float] = {}
    for key in results[0]:
        values = [plain(r.get(key)) for r in results]
        if all(isinstance(v, numbers.Real) for v in values):
            out[key] = math.fsum(float(v) for v in values) / len(values)
        elif key == metric:
            bad = next(v for v in values if not isinstance(v, numbers.Real))
            raise TypeError(f"eval_func's {metric!r} metric must be a number, got {bad!r}")
    return out
