"""Helpers AutoGen exposes from ``autogen.agentchat.utils``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["gather_usage_summary"]


def _add(total: dict[str, Any], summary: dict[str, Any] | None) -> None:
    if not summary:
        return
    total["total_cost"] = total.get("total_cost", 0) + summary.get("total_cost", 0)
    for model, usage in summary.items():
        if model == "total_cost" or not isinstance(usage, dict):
            continue
        mine = total.setdefault(
            model, {"cost": 0, "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        )
        for key in ("cost", "prompt_tokens", "completion_tokens", "total_tokens"):
            mine[key] = mine.get(key, 0) + usage.get(key, 0)


def gather_usage_summary(agents: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """The usage of the agents' model clients, with and without cache hits:
    ``{"usage_including_cached_inference": ..., "usage_excluding_cached_inference": ...}``."""
    including: dict[str, Any] = {"total_cost": 0}
    excluding: dict[str, Any] = {"total_cost": 0}
    for agent in agents:
        client = getattr(agent, "client", None)
        if client:
            _add(including, client.total_usage_summary)
            _add(excluding, client.actual_usage_summary)
    return {
        "usage_including_cached_inference": including,
        "usage_excluding_cached_inference": excluding,
    }
