"""Prompt-cache breakpoints for an Anthropic Messages request (a config entry's
``"prompt_cache": true``).

Anthropic caches a request's prefix, in the order tools, system, messages, up to each block
marked ``cache_control: {"type": "ephemeral"}`` (a *breakpoint*); a later request with the same
prefix reads it at a tenth of the input price. :func:`place_breakpoints` marks, in this order
of priority and as long as the request holds fewer than four (Anthropic's limit):

1. the system prompt (its last block): the same for every turn of a chat;
2. the stable prefix of the history: the last block of the message before the newest turn
   (the next request's history starts with everything up to it);
3. the last tool definition.

Blocks the caller marked are left as they are and count towards the four; a place already
marked is not marked again. Anthropic's other rules are kept: empty text blocks and thinking
blocks are never marked, and with a ``ttl`` no mark is placed where it would put a shorter
lifetime before a longer one. Whether a prefix is long enough to be cached (a per-model
minimum) is for the server to decide: a short one is simply not cached.

:func:`cache_usage` reads Anthropic's cache counts of a reply's usage into OpenAI's shape.

Pure: the request given is never changed, the text of no block changes (a string ``system``
or ``content`` becomes one text block holding the same text).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["MAX_BREAKPOINTS", "TTLS", "breakpoints", "cache_usage", "place_breakpoints"]

MAX_BREAKPOINTS = 4
TTLS = ("5m", "1h")
# Blocks Anthropic does not let carry cache_control.
_UNMARKABLE = frozenset({"thinking", "redacted_thinking"})

Block = dict[str, Any]


def _rank(mark: Any) -> int:
    """A breakpoint's lifetime, as a rank (longer is higher)."""
    ttl = mark.get("ttl", "5m") if isinstance(mark, Mapping) else "5m"
    return TTLS.index(ttl) if ttl in TTLS else 0


def _blocks(content: Any) -> list[Any]:
    return content if isinstance(content, list) else []


def _prefix_blocks(body: Mapping[str, Any]) -> Iterator[Any]:
    """Every block of the request that may carry cache_control, in prefix order."""
    yield from _blocks(body.get("tools"))
    yield from _as_blocks(body.get("system")) or ()
    for message in _blocks(body.get("messages")):
        if isinstance(message, Mapping):
            yield from _as_blocks(message.get("content")) or ()


def breakpoints(body: Mapping[str, Any]) -> list[int]:
    """The lifetime ranks of the request's breakpoints, in prefix order."""
    return [
        _rank(b["cache_control"])
        for b in _prefix_blocks(body)
        if isinstance(b, Mapping) and b.get("cache_control") is not None
    ]


def _markable(block: Any) -> bool:
    if not isinstance(block, Mapping) or block.get("type") in _UNMARKABLE:
        return False
    return block.get("type") != "text" or bool(str(block.get("text", "")).strip())


def _as_blocks(content: Any) -> list[Any] | None:
    """``content`` as a list of blocks (a string as one text block), or None."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else None
    return list(content) if isinstance(content, list) else None


def _last_markable(blocks: list[Any]) -> int | None:
    for i in range(len(blocks) - 1, -1, -1):
        if _markable(blocks[i]):
            return i
    return None


class _Placer:
    """Marks for one request: the new body, the marks it holds by prefix position."""

    def __init__(self, body: Mapping[str, Any], mark: dict[str, str]) -> None:
        self.body: dict[str, Any] = dict(body)
        self.mark = mark
        self.free = MAX_BREAKPOINTS - len(breakpoints(body))

    def _allowed(self, position: int) -> bool:
        """Whether a mark at ``position`` (among the prefix blocks) keeps every longer
        lifetime before every shorter one."""
        rank = _rank(self.mark)
        for i, block in enumerate(_prefix_blocks(self.body)):
            if isinstance(block, Mapping) and block.get("cache_control") is not None:
                other = _rank(block["cache_control"])
                if (i < position and other < rank) or (i > position and other > rank):
                    return False
        return True

    def _position(self, key: str, index: int, inner: int | None = None) -> int:
        """The prefix position of a block: tools, then system, then messages' blocks."""
        tools = len(_blocks(self.body.get("tools")))
        system = _as_blocks(self.body.get("system")) or []
        if key == "tools":
            return index
        if key == "system":
            return tools + index
        before = sum(
            len(_as_blocks(m.get("content")) or [])
            for m in _blocks(self.body.get("messages"))[:index]
            if isinstance(m, Mapping)
        )
        return tools + len(system) + before + (inner or 0)

    def _marked(self, blocks: list[Any], at: int) -> list[Any]:
        out = list(blocks)
        out[at] = {**out[at], "cache_control": dict(self.mark)}
        return out

    def system(self) -> None:
        blocks = _as_blocks(self.body.get("system"))
        at = None if blocks is None else _last_markable(blocks)
        if blocks is None or at is None or blocks[at].get("cache_control") is not None:
            return
        if self._allowed(self._position("system", at)):
            self.body["system"] = self._marked(blocks, at)
            self.free -= 1

    def history(self) -> None:
        messages = _blocks(self.body.get("messages"))
        if len(messages) < 2 or not isinstance(messages[-2], Mapping):
            return
        index = len(messages) - 2
        blocks = _as_blocks(messages[index].get("content"))
        at = None if blocks is None else _last_markable(blocks)
        if blocks is None or at is None or blocks[at].get("cache_control") is not None:
            return
        if self._allowed(self._position("messages", index, at)):
            changed = list(messages)
            changed[index] = {**messages[index], "content": self._marked(blocks, at)}
            self.body["messages"] = changed
            self.free -= 1

    def tools(self) -> None:
        tools = _blocks(self.body.get("tools"))
        if not tools or not isinstance(tools[-1], Mapping):
            return
        if tools[-1].get("cache_control") is not None:
            return
        if self._allowed(self._position("tools", len(tools) - 1)):
            self.body["tools"] = self._marked(tools, len(tools) - 1)
            self.free -= 1


def place_breakpoints(body: Mapping[str, Any], ttl: str | None = None) -> dict[str, Any]:
    """A copy of the Messages API request ``body`` with cache breakpoints placed (see the
    module's docstring); ``ttl`` is ``"5m"`` or ``"1h"`` (None: Anthropic's default, 5
    minutes). ValueError for another ``ttl``."""
    if ttl is not None and ttl not in TTLS:
        raise ValueError(f"prompt_cache_ttl must be one of {', '.join(TTLS)}, got {ttl!r}")
    mark = {"type": "ephemeral"} if ttl is None else {"type": "ephemeral", "ttl": ttl}
    placer = _Placer(body, mark)
    for step in (placer.system, placer.history, placer.tools):
        if placer.free <= 0:
            break
        step()
    return placer.body


def _count(owner: Any, name: str) -> int:
    value = getattr(owner, name, None)
    return value if isinstance(value, int) and value > 0 else 0


def cache_usage(usage: Any) -> dict[str, Any] | None:
    """Anthropic's prompt-cache counts of a reply's ``usage`` as a ChatCompletion usage's
    ``prompt_tokens_details``: ``cached_tokens`` (read, OpenAI's name), and parley's
    ``cache_creation_tokens`` (written) with ``cache_creation_1h_tokens`` (those of them
    kept an hour); None when the reply reports neither."""
    read = _count(usage, "cache_read_input_tokens")
    written = _count(usage, "cache_creation_input_tokens")
    if not (read or written):
        return None
    details: dict[str, int] = {"cached_tokens": read}
    if written:
        details["cache_creation_tokens"] = written
        hour = _count(getattr(usage, "cache_creation", None), "ephemeral_1h_input_tokens")
        if hour:
            details["cache_creation_1h_tokens"] = min(hour, written)
    return {"prompt_tokens_details": details}
