"""``Budget``: the limits a chat may not cross, and the pure checks against them."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["BUDGET_REASONS", "Budget", "Spent", "checked", "exhausted"]

BUDGET_REASONS = ("budget:cost", "budget:tokens", "budget:llm_calls", "budget:seconds")
"""The ``termination_reason`` of a chat a budget ended, one per kind of limit."""


@dataclass(frozen=True)
class Budget:
    """What a chat (with everything it causes: nested chats, speaker selection, summaries,
    tools that call models) may spend. ``None`` means no limit of that kind.

    - ``max_cost``: US dollars of model calls (cached answers cost nothing);
    - ``max_tokens``: prompt + completion tokens of model calls (cached answers excluded);
    - ``max_llm_calls``: requests sent to a model (cache hits are not requests);
    - ``max_seconds``: wall-clock time since the chat started.

    The chat checks its budget before each turn and before each model request: once a limit
    is reached, the chat ends cleanly there (no reply is half made or half sent), and its
    ``ChatResult.termination_reason`` names the limit (``"budget:cost"``, ...). A request is
    not cut short, so the one that crosses ``max_cost`` or ``max_tokens`` completes;
    ``max_llm_calls`` is never crossed.
    """

    max_cost: float | None = None
    max_tokens: int | None = None
    max_seconds: float | None = None
    max_llm_calls: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_cost", "max_seconds"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"Budget.{name} must be a number or None, got {value!r}")
            if math.isnan(value) or value < 0:
                raise ValueError(f"Budget.{name} must be 0 or more, got {value!r}")
        for name in ("max_tokens", "max_llm_calls"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"Budget.{name} must be an int or None, got {value!r}")
            if value < 0:
                raise ValueError(f"Budget.{name} must be 0 or more, got {value!r}")


def checked(budget: object) -> Budget | None:
    """``budget`` if it is a :class:`Budget` or None; a TypeError naming the type otherwise."""
    if budget is not None and not isinstance(budget, Budget):
        raise TypeError(f"budget must be a parley.usage.Budget, got {type(budget).__name__}")
    return budget


@dataclass(slots=True)
class Spent:
    """Running totals of what was really spent (cache hits excluded)."""

    cost: float = 0.0
    tokens: int = 0
    llm_calls: int = 0

    def add(self, cost: float, tokens: int) -> None:
        self.cost += cost
        self.tokens += tokens
        self.llm_calls += 1

    def minus(self, other: Spent) -> Spent:
        return Spent(
            self.cost - other.cost, self.tokens - other.tokens, self.llm_calls - other.llm_calls
        )


def exhausted(budget: Budget, spent: Spent, seconds: float) -> str | None:
    """The reason a chat must stop before its next step, or None: a limit that ``spent`` (and
    ``seconds`` elapsed) has reached. Reaching ``max_llm_calls`` counts, as one more request
    would cross it."""
    if budget.max_cost is not None and spent.cost >= budget.max_cost:
        return "budget:cost"
    if budget.max_tokens is not None and spent.tokens >= budget.max_tokens:
        return "budget:tokens"
    if budget.max_llm_calls is not None and spent.llm_calls >= budget.max_llm_calls:
        return "budget:llm_calls"
    if budget.max_seconds is not None and seconds >= budget.max_seconds:
        return "budget:seconds"
    return None
