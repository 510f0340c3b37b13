"""``Completion.test``: a config's metrics over a data set, aggregated as AutoGen's ``test`` did.

``test`` requests the instances concurrently (:mod:`parley.oai._gather`) and then calls
``eval_func`` for each instance in data order, so its results never depend on which reply came
first. Means and medians use :mod:`statistics` (AutoGen used numpy; the values are the same).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["aggregate", "metric_names"]


def metric_names(first: Mapping[str, Any]) -> list[str]:
    """The keys of the first instance's metrics that hold numbers (``float()`` accepts them);
    a value like a voted answer text is left out, as in AutoGen."""
    names = []
    for name, value in first.items():
        try:
            float(value)
        except ValueError:
            continue
        except TypeError as e:
            raise TypeError(
                f"metric {name!r} of the first instance is {value!r}, which is not a number; "
                "eval_func must return numbers (or text, which test() leaves out)"
            ) from e
        names.append(name)
    return names


def _aggregator(agg_method: Any, name: str) -> Callable[[list[float]], Any] | None:
    if isinstance(agg_method, str):
        if agg_method in ("avg", "average"):
            return statistics.fmean
        if agg_method == "median":
            return statistics.median
        return None
    if callable(agg_method):
        return agg_method  # type: ignore[no-any-return]
    if isinstance(agg_method, Mapping):
        method = agg_method.get(name)
        if not callable(method):
            raise AssertionError("please provide a callable for each metric")
        return method  # type: ignore[no-any-return]
    raise ValueError(
        f"agg_method must be 'avg', 'median', a callable or a dict of callables, got {agg_method!r}"
    )


def aggregate(
    results: Sequence[Mapping[str, Any]], agg_method: Any, cost: float, count: int
) -> dict[str, Any]:
    """The per-instance ``results`` aggregated per metric, with ``cost`` (total) and
    ``inference_cost`` (per instance) unless the metrics already have them. An unknown method
    name leaves the lists unaggregated (AutoGen warned and did the same)."""
    names = metric_names(results[0])
    out: dict[str, Any] = {}
    for name in names:
        values = [r[name] for r in results]
        method = _aggregator(agg_method, name)
        out[name] = values if method is None else method(values)
    out.setdefault("cost", cost)
    out.setdefault("inference_cost", cost / count)
    return out
