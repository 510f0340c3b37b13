"""``Completion.tune``: search inference settings (model, prompt, ``n``, ``max_tokens``,
temperature or top_p, ...) for the best metric on a data set, within an inference budget (mean
USD per instance) and an optimisation budget (total USD spent tuning), with FLAML.

How it is put together:

- :mod:`._tune_space` builds the space FLAML searches from the class's default space and the
  caller's overrides, and turns a trial's config back into request parameters;
- :mod:`._tune_checks` rejects bad arguments before anything is spent;
- :mod:`._tune_eval` runs one trial (concurrent requests, pruning, ``eval_func``);
- :mod:`._tune_prune` is what the run has learnt about cost;
- :mod:`._tune_log` is the trial log that lets an interrupted run resume.

parley's additions to AutoGen's signature are keyword-only and named so that they cannot be
mistaken for request parameters: ``search_seed`` (the searcher's seed; the same call proposes
the same trials) and ``max_concurrency`` (requests in flight within a trial). Unlike AutoGen,
the state of a run lives in its own objects, not on the class; the class only receives, at the
end, what ``test`` reads (``data``, ``_eval_func``, ``_metric``, ...).
"""

from __future__ import annotations

import collections
import logging
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ._tune_checks import (
    check_arguments,
    check_inference_budget,
    check_prices,
    check_templates,
    estimate_input_tokens,
)
from ._tune_eval import TrialEvaluator, TuneSettings
from ._tune_log import Record, TrialLog, fingerprint, loggable
from ._tune_prune import PruneState
from ._tune_space import (
    SearchProblem,
    build_problem,
    default_search_space,
    flaml_modules,
    plain,
    served_by,
)

__all__ = ["default_search_space", "tune"]

logger = logging.getLogger("parley.oai.completion")

DEFAULT_SEARCH_SEED = 20  # FLAML's own default, so that parley searches as AutoGen did


def _make_searcher(
    problem: SearchProblem,
    metric: str,
    mode: str,
    optimization_budget: float | None,
    seed: int,
    points: list[dict[str, Any]] | None,
) -> Any:
    flaml = flaml_modules()
    try:
        import optuna  # noqa: F401 - BlendSearch's global search needs it
    except ImportError:
        searcher_cls = flaml.CFO  # FLAML's local search alone: no optuna needed
    else:
        searcher_cls = flaml.BlendSearch
    return searcher_cls(
        metric=metric,
        mode=mode,
        space=problem.space,
        points_to_evaluate=points,
        cost_attr="cost",
        cost_budget=optimization_budget,
        seed=seed,
    )


def _first_points(problem: SearchProblem, make: Callable[[Any], Any]) -> list[dict[str, Any]]:
    """The searcher's first proposal, once per model: every model starts from the same
    settings, so the first trials compare the models and nothing else."""
    first = plain(make(None).suggest("first-point"))
    return [{**first, "subspace": {**first["subspace"], "model": m}} for m in problem.models]


@contextmanager
def _quiet_libraries(level: int) -> Iterator[None]:
    # optuna announces every study it creates and flaml its choices at INFO; they follow the
    # level the caller gave tune, and get their own levels back afterwards.
    loggers = [logging.getLogger(name) for name in ("optuna", "flaml")]
    saved = [lg.level for lg in loggers]
    if level > logging.INFO:
        for lg in loggers:
            lg.setLevel(level)
    try:
        yield
    finally:
        for lg, old in zip(loggers, saved, strict=True):
            lg.setLevel(old)


class _Trials:
    """The evaluation function FLAML calls: replays the trials a log recorded (no requests,
    no ``eval_func``; the searcher hears the same results in the same order, so it proposes
    the same next configs), then evaluates and records new ones."""

    def __init__(self, evaluator: TrialEvaluator, log: TrialLog | None) -> None:
        self.evaluator = evaluator
        self.log = log
        self.pending = collections.deque(log.open() if log is not None else [])
        self.count = 0

    def __call__(self, config: Mapping[str, Any]) -> dict[str, Any] | None:
        self.count += 1
        logged = loggable(config)
        if self.pending:
            record = self.pending[0]
            if record.config == logged:
                self.pending.popleft()
                self.evaluator.state = PruneState.restore(record.state)
                logger.info("trial %d replayed from the log: %s", self.count, record.result)
                return dict(record.result)
            logger.warning(
                "trial %d of the tune log differs from the configuration the search proposes "
                "now; evaluating from there on",
                self.count,
            )
            assert self.log is not None
            self.log.truncate(self.count - 1)
            self.pending.clear()
        if self.evaluator.guard.exhausted():
            # The optimization budget cannot pay for another request: None ends flaml's run
            # (its searcher would otherwise go on proposing trials that cost nothing).
            logger.info("trial %d not run: the optimization budget is spent", self.count)
            return None
        result = self.evaluator(config)
        if self.log is not None:
            self.log.append(Record(logged, result, self.evaluator.state.snapshot()))
        logger.info("trial %d %s: %s", self.count, logged, result)
        return dict(result)


def _qualified_name(func: Any) -> str:
    # A callable object is named by its class: its repr may hold an address that changes
    # from run to run, which would make every log look like another problem's.
    named = func if hasattr(func, "__qualname__") else type(func)
    return f"{named.__module__}.{named.__qualname__}"


def tune(
    cls: type[Any],
    /,
    data: Sequence[Mapping[str, Any]],
    metric: str,
    mode: str,
    eval_func: Callable[..., Mapping[str, Any]],
    log_file_name: str | None = None,
    inference_budget: float | None = None,
    optimization_budget: float | None = None,
    num_samples: int | None = 1,
    logging_level: int | None = logging.WARNING,
    *,
    search_seed: int = DEFAULT_SEARCH_SEED,
    max_concurrency: int = 8,
    **config: Any,
) -> tuple[dict[str, Any], Any]:
    """Search inference settings for the best ``metric`` on ``data``; returns
    ``(best config, flaml's analysis)`` (``Completion.tune`` and ``ChatCompletion.tune``: ``cls``
    is the class). See :mod:`parley.oai.legacy._tune`.

    ``config`` overrides :attr:`default_search_space` (constants or ``flaml.tune``
    domains; a list of prompts, messages or stops is a choice). parley's additions:
    ``search_seed`` (the same call proposes the same trials), ``max_concurrency``
    (requests in flight within a trial); ``log_file_name`` is a JSON-lines trial log
    from which an interrupted run resumes.
    """
    flaml = flaml_modules()
    samples = 1 if num_samples is None else num_samples
    instances, inference, optimization = check_arguments(
        data,
        metric,
        mode,
        eval_func,
        inference_budget=inference_budget,
        optimization_budget=optimization_budget,
        num_samples=samples,
        search_seed=search_seed,
        max_concurrency=max_concurrency,
    )
    level = logging.WARNING if logging_level is None else logging_level
    old_level = logger.level
    logger.setLevel(level)
    try:
        problem = build_problem(cls.default_search_space, config)
        price = problem.space.get("price")
        allow_format = problem.space.get("allow_format_str_template") is True
        check_templates(problem, instances, allow_format)
        if inference is not None or optimization is not None:
            check_prices(cls.price_of, cls.__name__, problem.models, price, problem.config_list)
        estimates = estimate_input_tokens(problem, instances, cls.is_chat_model, allow_format)
        if inference is not None:
            check_inference_budget(
                inference,
                estimates,
                lambda model: tuple(cls.price_of(*served_by(model, price, problem.config_list)[0])),
            )
        settings = TuneSettings(
            instances, metric, mode, eval_func, inference, optimization, max_concurrency
        )
        evaluator = TrialEvaluator(cls, problem, settings, estimates)

        def make(points: list[dict[str, Any]] | None) -> Any:
            return _make_searcher(problem, metric, mode, optimization, search_seed, points)

        log = None
        if log_file_name:
            key = fingerprint(
                {
                    "class": cls.__qualname__,
                    "data": instances,
                    "metric": metric,
                    "mode": mode,
                    "inference_budget": inference,
                    "optimization_budget": optimization,
                    "space": problem.space,
                    "templates": [problem.prompts, problem.messages, problem.stops],
                    "search_seed": search_seed,
                    "eval_func": _qualified_name(eval_func),
                }
            )
            header = {"fingerprint": key, "class": cls.__qualname__, "metric": metric, "mode": mode}
            log = TrialLog(log_file_name, header)
        with _quiet_libraries(level):
            points = _first_points(problem, make) if problem.hierarchical else None
            analysis = flaml.tune.run(
                _Trials(evaluator, log),
                search_alg=make(points),
                metric=metric,
                mode=mode,
                num_samples=samples,
                verbose=0,
            )
        best_trial = analysis.best_trial if _any_scored(analysis, metric) else None
        if best_trial is None:
            logger.warning(
                "no trial of tune() produced a %s within the budgets; returning an empty config "
                "(raise inference_budget, optimization_budget or num_samples)",
                metric,
            )
            best: dict[str, Any] = {}
        else:
            best = problem.request(best_trial.config).params
        _remember(cls, settings, problem)
        return best, analysis
    finally:
        logger.setLevel(old_level)


def _any_scored(analysis: Any, metric: str) -> bool:
    # flaml warns when asked for the best of trials that were all rejected (metric +-inf).
    return any(
        math.isfinite(float((trial.last_result or {}).get(metric, math.nan)))
        for trial in analysis.trials
    )


def _remember(cls: Any, settings: TuneSettings, problem: SearchProblem) -> None:
    """What ``test`` and AutoGen-era code read from the class after a tuning run."""
    for name, value in {
        "data": list(settings.data),
        "_eval_func": settings.eval_func,
        "_metric": settings.metric,
        "_mode": settings.mode,
        "inference_budget": settings.inference_budget,
        "optimization_budget": settings.optimization_budget,
        "_prompts": problem.prompts,
        "_messages": problem.messages,
        "_stops": problem.stops,
        "_config_list": problem.config_list,
        "_prune_hp": problem.prune_hp,
    }.items():
        setattr(cls, name, value)
