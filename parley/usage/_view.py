"""``Usage``: what a chat's model calls cost, grouped as you ask, printable as a table."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from ._run import DETAIL_KEYS, LLMCall

__all__ = ["Usage"]

_COLUMNS = ("calls", "cached", "prompt", "completion", "total", "cost (USD)")


class Usage:
    """An immutable view over model calls (``ChatResult.usage``, per chat and everything it
    caused). Totals count what was really spent: cache hits are listed in ``cached_calls``
    and cost nothing in ``cost``; ``cost_including_cached`` is what they would have cost.
    Costs are summed with :func:`math.fsum`, so a total is the exact (correctly rounded) sum of
    the calls' costs whatever the order.

    ``by_agent()``, ``by_model()``, ``by_chat()`` and ``by_purpose()`` split it; ``table(by)``
    renders one split as text (``print(usage)`` shows the agents and the models);
    ``to_autogen()`` gives AutoGen's ``ChatResult.cost`` shape.
    """

    __slots__ = ("calls",)

    def __init__(self, calls: Iterable[LLMCall] = ()) -> None:
        self.calls: tuple[LLMCall, ...] = tuple(calls)

    @classmethod
    def of(cls, *results: Any) -> Usage:
        """The usage of several chats together (``ChatResult`` objects or ``Usage`` views)."""
        calls: list[LLMCall] = []
        for result in results:
            usage = result if isinstance(result, Usage) else getattr(result, "usage", None)
            if usage is not None:
                calls.extend(usage.calls)
        return cls(calls)

    # -- totals ---------------------------------------------------------------------------

    def _paid(self) -> list[LLMCall]:
        return [c for c in self.calls if not c.cached]

    @property
    def cost(self) -> float:
        """US dollars spent (cache hits excluded)."""
        return math.fsum(c.cost for c in self._paid())

    @property
    def cost_including_cached(self) -> float:
        return math.fsum(c.cost for c in self.calls)

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self._paid())

    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self._paid())

    @property
    def total_tokens(self) -> int:
        return sum(c.total_tokens for c in self._paid())

    @property
    def cached_tokens(self) -> int:
        """Prompt tokens read from the provider's prompt cache (part of ``prompt_tokens``)."""
        return sum(c.cached_tokens for c in self._paid())

    @property
    def cache_creation_tokens(self) -> int:
        """Prompt tokens written to the provider's prompt cache (part of ``prompt_tokens``)."""
        return sum(c.cache_creation_tokens for c in self._paid())

    @property
    def reasoning_tokens(self) -> int:
        """Completion tokens spent reasoning (part of ``completion_tokens``)."""
        return sum(c.reasoning_tokens for c in self._paid())

    @property
    def llm_calls(self) -> int:
        """Requests sent to a model (cache hits excluded)."""
        return len(self._paid())

    @property
    def cached_calls(self) -> int:
        return len(self.calls) - self.llm_calls

    @property
    def seconds(self) -> float:
        """Time spent waiting for models (the calls' durations added up)."""
        return math.fsum(c.duration for c in self.calls)

    # -- splits ---------------------------------------------------------------------------

    def _split(self, key: Callable[[LLMCall], str | None]) -> dict[str, Usage]:
        groups: dict[str, list[LLMCall]] = {}
        for call in self.calls:
            groups.setdefault(key(call) or "-", []).append(call)
        return {name: Usage(calls) for name, calls in groups.items()}

    def by_agent(self) -> dict[str, Usage]:
        """Per agent the calls were charged to (``"-"``: made outside any agent's turn)."""
        return self._split(lambda c: c.agent)

    def by_model(self) -> dict[str, Usage]:
        return self._split(lambda c: c.model)

    def by_chat(self) -> dict[str, Usage]:
        """Per chat id (a nested chat's calls under its own id)."""
        return self._split(lambda c: c.chat_id)

    def by_purpose(self) -> dict[str, Usage]:
        """Per purpose: ``reply``, ``speaker_selection``, ``summary``, ``tool``, ``other``."""
        return self._split(lambda c: c.purpose)

    # -- AutoGen's shape ------------------------------------------------------------------

    def summary(self, include_cached: bool = True) -> dict[str, Any]:
        """AutoGen's usage summary: ``{"total_cost": ..., "<model>": {"cost", "prompt_tokens",
        "completion_tokens", "total_tokens"}}``; a model's entry also holds
        ``cached_tokens``, ``cache_creation_tokens`` and ``reasoning_tokens`` when one of its
        calls reported them (as ``OpenAIWrapper``'s summaries do)."""
        calls = self.calls if include_cached else self._paid()
        out: dict[str, Any] = {"total_cost": math.fsum(c.cost for c in calls)}
        for model, usage in Usage(calls).by_model().items():
            out[model] = {
                "cost": math.fsum(c.cost for c in usage.calls),
                "prompt_tokens": sum(c.prompt_tokens for c in usage.calls),
                "completion_tokens": sum(c.completion_tokens for c in usage.calls),
                "total_tokens": sum(c.total_tokens for c in usage.calls),
            }
            for key in DETAIL_KEYS:
                count = sum(getattr(c, key) for c in usage.calls)
                if count:
                    out[model][key] = count
        if not calls:
            out["total_cost"] = 0
        return out

    def to_autogen(self) -> dict[str, Any]:
        """``ChatResult.cost``'s shape (``usage_including_cached_inference`` / ``excluding``)."""
        return {
            "usage_including_cached_inference": self.summary(True),
            "usage_excluding_cached_inference": self.summary(False),
        }

    # -- tables ---------------------------------------------------------------------------

    def table(self, by: str = "agent") -> str:
        """One split as a text table: ``by`` is ``"agent"``, ``"model"``, ``"chat"`` or
        ``"purpose"``; a total row closes it."""
        splits = {
            "agent": self.by_agent,
            "model": self.by_model,
            "chat": self.by_chat,
            "purpose": self.by_purpose,
        }
        if by not in splits:
            raise ValueError(f"by must be one of {sorted(splits)}, got {by!r}")
        rows = [[name, *_cells(usage)] for name, usage in splits[by]().items()]
        rows.append(["total", *_cells(self)])
        return render_table([by, *_COLUMNS], rows)

    def __str__(self) -> str:
        return self.table("agent") + "\n\n" + self.table("model")

    def __repr__(self) -> str:
        return (
            f"Usage(cost={self.cost!r}, llm_calls={self.llm_calls}, "
            f"cached_calls={self.cached_calls}, total_tokens={self.total_tokens})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Usage) and self.calls == other.calls

    def __hash__(self) -> int:
        return hash(self.calls)

    def __add__(self, other: Usage) -> Usage:
        return Usage((*self.calls, *other.calls))


def _cells(usage: Usage) -> list[str]:
    return [
        str(usage.llm_calls),
        str(usage.cached_calls),
        str(usage.prompt_tokens),
        str(usage.completion_tokens),
        str(usage.total_tokens),
        f"{usage.cost:.6f}",
    ]


def render_table(header: list[str], rows: list[list[str]]) -> str:
    """Rows under a header, columns padded (text left, numbers right), with a rule."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows)])
