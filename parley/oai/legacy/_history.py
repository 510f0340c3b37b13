"""The call history ``Completion.start_logging`` keeps, and the usage summary printed from it.

Two shapes, as AutoGen's:

- compact (the default): one entry per conversation, keyed by the JSON of its messages and the
  reply's choices (for completions: the prompt and the texts). A request that continues a logged
  conversation (its earlier messages are an entry's key) moves that entry to the new key, so a
  growing chat keeps one entry, and a repeated call adds to its entry: ``{"created_at": [call indices], "cost": [...],
  "token_count": [{"model", "prompt_tokens", "completion_tokens", "total_tokens"}, ...]}``;
- full: ``{call index: {"request": the request, "response": the response dict}}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["record", "usage_summary_lines"]


def _key(items: list[Any]) -> str:
    return json.dumps(items, sort_keys=True)


def record(
    history: dict[Any, Any],
    index: int,
    request: Mapping[str, Any],
    response: Mapping[str, Any],
    *,
    compact: bool,
) -> None:
    """Add call number ``index`` (``request`` answered by ``response``) to ``history``."""
    if not compact:
        history[index] = {"request": dict(request), "response": dict(response)}
        return
    choices = response.get("choices", [])
    entry: dict[str, list[Any]] = {"created_at": [], "cost": [], "token_count": []}
    messages = request.get("messages")
    if messages is not None:
        messages = list(messages)
        if len(messages) > 1 and messages[-1].get("role") != "assistant":
            entry = history.pop(_key(messages[:-1]), entry)
        key = _key(messages + [choice.get("message") for choice in choices])
    else:
        key = _key([request.get("prompt")] + [choice.get("text") for choice in choices])
    # The same call again (a cache hit, say) adds to its entry; AutoGen replaced the entry.
    entry = history.get(key, entry)
    entry["created_at"].append(index)
    entry["cost"].append(response.get("cost", 0))
    usage = response.get("usage")
    if usage:
        entry["token_count"].append(
            {
                "model": response.get("model"),
                "prompt_tokens": usage.get("prompt_tokens", 0),
                "completion_tokens": usage.get("completion_tokens", 0),
                "total_tokens": usage.get("total_tokens", 0),
            }
        )
    history[key] = entry


def _usage_rows(history: Mapping[Any, Any], compact: bool) -> Iterable[tuple[Any, Any]]:
    for value in history.values():
        if compact:
            for count in value["token_count"]:
                yield count["model"], count
        else:
            response = value["response"]
            yield response.get("model"), response.get("usage") or {}


def usage_summary_lines(history: Mapping[Any, Any] | None, compact: bool) -> list[str]:
    """The lines ``print_usage_summary`` prints: the total cost, then tokens per model."""
    if history is None:
        return ["No usage summary available."]
    if compact:
        total = sum(sum(value["cost"]) for value in history.values())
    else:
        total = sum(value["response"].get("cost", 0) for value in history.values())
    counts: dict[Any, dict[str, int]] = {}
    for model, usage in _usage_rows(history, compact):
        row = counts.setdefault(
            model, {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        )
        for name in row:
            row[name] += usage.get(name, 0) or 0
    lines = [f"Total cost: {total}"]
    for model, row in counts.items():
        lines.append(
            f"Token count summary for model {model}: prompt_tokens: {row['prompt_tokens']}, "
            f"completion_tokens: {row['completion_tokens']}, total_tokens: {row['total_tokens']}"
        )
    return lines
