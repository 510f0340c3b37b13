"""What a tuning run has learnt about cost, so that it stops paying for configs that cannot fit
the inference budget.

Per region (model, template, stop; see :data:`Region`) and ``max_tokens`` the run remembers the
largest number of completions ``n`` proven within budget and the smallest proven over it. Fewer
output tokens allowed cannot cost more, so a proof at one ``max_tokens`` carries over: *valid*
to smaller ``max_tokens``, *invalid* to larger ones.

A proof is statistical: the mean output tokens measured on the first ``k`` of ``N`` instances
must clear the target by a margin that shrinks as ``k`` grows (a Hoeffding-Serfling bound for
sampling without replacement), so a cheap config is recognised after a few instances and an
expensive one is stopped after the first.

The state is plain data with a JSON snapshot, written to the trial log after each trial, so a
resumed run starts from what the interrupted one knew.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ._tune_space import Region

__all__ = ["PruneState", "sample_margin", "target_output_tokens"]


def sample_margin(used: int, total: int) -> float:
    """The relative margin the mean over ``used`` of ``total`` instances must clear.

    Serfling's finite-population factor ``rho`` goes to 0 as the sample approaches the whole
    data set (then the mean is exact); the 0.1 scale is AutoGen's.
    """
    if used >= total:
        return 0.0
    # Serfling's two regimes: up to half the data, and beyond (where the bound tightens).
    rho = 1 - (used - 1) / total if 2 * used <= total else (1 - used / total) * (1 + 1 / used)
    return 0.1 * math.sqrt(rho / used)


def target_output_tokens(
    inference_budget: float, input_tokens: float, price: tuple[float, float]
) -> float:
    """How many output tokens per instance (all completions together) the budget buys once the
    input is paid for; negative when the input alone costs more."""
    in_price, out_price = price
    left = inference_budget * 1000 - input_tokens * in_price
    if out_price <= 0:
        return math.inf if left >= 0 else -math.inf
    return left / out_price


def _key(max_tokens: float) -> float:
    return float(max_tokens)


@dataclass
class PruneState:
    """The run's spend and its proofs about cost."""

    total_cost: float = 0.0
    # region -> {max_tokens: n}
    valid: dict[Region, dict[float, int]] = field(default_factory=dict)
    invalid: dict[Region, dict[float, int]] = field(default_factory=dict)
    # (model, template index) -> mean prompt tokens per instance, measured by the first trial
    # of that template that saw every instance (before that, tune estimates them).
    input_tokens: dict[tuple[str, int | None], float] = field(default_factory=dict)

    def largest_valid(self, region: Region, max_tokens: float) -> int:
        """The largest ``n`` proven within budget at ``max_tokens`` (0 if none)."""
        proofs = self.valid.get(region, {})
        return max((n for m, n in proofs.items() if m >= max_tokens), default=0)

    def smallest_invalid(self, region: Region, max_tokens: float) -> int | None:
        """The smallest ``n`` proven over budget at ``max_tokens``, or None."""
        proofs = self.invalid.get(region, {})
        return min((n for m, n in proofs.items() if m <= max_tokens), default=None)

    def mark_valid(self, region: Region, max_tokens: float, n: int) -> None:
        proofs = self.valid.setdefault(region, {})
        proofs[_key(max_tokens)] = max(n, proofs.get(_key(max_tokens), 0))

    def mark_invalid(self, region: Region, max_tokens: float, n: int) -> None:
        proofs = self.invalid.setdefault(region, {})
        proofs[_key(max_tokens)] = min(n, proofs.get(_key(max_tokens), n))

    # -- the trial log's snapshot --------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The state as JSON-ready data (``max_tokens`` may be ``inf``: no limit)."""

        def proofs(table: dict[Region, dict[float, int]]) -> list[list[Any]]:
            return [[*region, m, n] for region, by_m in table.items() for m, n in by_m.items()]

        return {
            "total_cost": self.total_cost,
            "valid": proofs(self.valid),
            "invalid": proofs(self.invalid),
            "input_tokens": [[*k, v] for k, v in self.input_tokens.items()],
        }

    @classmethod
    def restore(cls, snapshot: dict[str, Any]) -> PruneState:
        """The state a :meth:`snapshot` describes."""
        state = cls(total_cost=float(snapshot["total_cost"]))
        for model, template, stop, m, n in snapshot["valid"]:
            state.mark_valid((model, template, stop), m, n)
        for model, template, stop, m, n in snapshot["invalid"]:
            state.mark_invalid((model, template, stop), m, n)
        for model, template, tokens in snapshot["input_tokens"]:
            state.input_tokens[(model, template)] = float(tokens)
        return state
