"""The fake server's prompt cache: what the providers' caches do, so that a test sees cached
token counts come back as production would report them.

- :class:`PromptCache`: the prefixes one server has cached (by a hash of the prefix, with the
  model), each kept for its lifetime and refreshed when read.
- Anthropic (:func:`check_anthropic_breakpoints`, :func:`anthropic_cache_usage`): a request
  marks breakpoints with ``cache_control``; the API refuses more than four, and marks on
  thinking blocks or empty text blocks. Each breakpoint's prefix (tools, system, messages, in
  that order) is written to the cache; a later request reads the longest cached prefix found
  at one of its breakpoints or up to 20 blocks before one (Anthropic's lookback), and writes
  the rest up to its last breakpoint.
- OpenAI (:func:`openai_cache_usage`): a request naming a ``prompt_cache_key`` reads the longest
  earlier prefix of its messages under that key, when it is 1024 tokens or more, counted in
  steps of 128 tokens as OpenAI counts them.

Token counts follow the fake's own count of the prompt: a prefix counts its share of it.
The per-model minimum length Anthropic caches is not applied: any prefix is cached here.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ._render import approx_tokens
from ._validation import RequestError

__all__ = [
    "PromptCache",
    "anthropic_cache_usage",
    "check_anthropic_breakpoints",
    "openai_cache_usage",
]

_LIFETIMES = {"5m": 300.0, "1h": 3600.0}
_LOOKBACK = 20
_MAX_BREAKPOINTS = 4
_OPENAI_MINIMUM = 1024
_OPENAI_STEP = 128
_OPENAI_LIFETIME = 600.0


class PromptCache:
    """Cached prefixes by key, each with when it expires; thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[float, float]] = {}  # key -> (expires, lifetime)

    def read(self, keys: Sequence[str], positions: Sequence[int]) -> int:
        """The highest of ``positions`` whose key is cached (its lifetime starts again), or
        -1."""
        now = self._clock()
        with self._lock:
            for position in sorted(positions, reverse=True):
                entry = self._entries.get(keys[position])
                if entry is not None and entry[0] > now:
                    self._entries[keys[position]] = (now + entry[1], entry[1])
                    return position
        return -1

    def write(self, key: str, lifetime: float) -> None:
        with self._lock:
            self._entries[key] = (self._clock() + lifetime, lifetime)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _chain(seed: str, blocks: Sequence[Any]) -> list[str]:
    """Per block, a key of the prefix ending with it."""
    digest = hashlib.sha256(seed.encode())
    keys = []
    for block in blocks:
        digest.update(json.dumps(block, sort_keys=True, default=str).encode())
        keys.append(digest.copy().hexdigest())
    return keys


def _weights(blocks: Sequence[Any]) -> list[int]:
    """The prefix sizes: each block's JSON counted as text, summed up to it."""
    total, out = 0, []
    for block in blocks:
        total += approx_tokens(json.dumps(block, sort_keys=True, default=str))
        out.append(total)
    return out


# -- Anthropic ------------------------------------------------------------------------------


def _listed(content: Any) -> list[Any]:
    return content if isinstance(content, list) else []


def _marked_blocks(body: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every block of the request that may carry cache_control, with where it is, in prefix
    order (tool results' own content blocks after the result)."""
    for i, tool in enumerate(_listed(body.get("tools"))):
        if isinstance(tool, Mapping):
            yield f"tools.{i}", tool
    for i, block in enumerate(_listed(body.get("system"))):
        if isinstance(block, Mapping):
            yield f"system.{i}", block
    for i, message in enumerate(_listed(body.get("messages"))):
        content = message.get("content") if isinstance(message, Mapping) else None
        for j, block in enumerate(_listed(content)):
            if isinstance(block, Mapping):
                yield f"messages.{i}.content.{j}", block
                for k, inner in enumerate(_listed(block.get("content"))):
                    if isinstance(inner, Mapping):
                        yield f"messages.{i}.content.{j}.content.{k}", inner


def _invalid(message: str) -> RequestError:
    return RequestError(message, type="invalid_request_error")


def check_anthropic_breakpoints(body: Mapping[str, Any]) -> None:
    """Raise :class:`RequestError` where Anthropic refuses the request's ``cache_control``
    marks (its wording)."""
    found = 0
    for where, block in _marked_blocks(body):
        mark = block.get("cache_control")
        if mark is None:
            continue
        found += 1
        kind = block.get("type")
        if kind in ("thinking", "redacted_thinking"):
            raise _invalid(f"{where}.{kind}.cache_control: Extra inputs are not permitted")
        if not isinstance(mark, Mapping) or mark.get("type") != "ephemeral":
            raise _invalid(f"{where}.cache_control.type: Input should be 'ephemeral'")
        if "ttl" in mark and mark["ttl"] not in _LIFETIMES:
            raise _invalid(f"{where}.cache_control.ttl: Input should be '5m' or '1h'")
        if kind == "text" and not str(block.get("text", "")).strip():
            raise _invalid(f"{where}.text: cache_control cannot be set for empty text blocks")
    if found > _MAX_BREAKPOINTS:
        raise _invalid(
            f"A maximum of {_MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {found}."
        )


def _prefix(body: Mapping[str, Any]) -> tuple[list[Any], list[str | None]]:
    """The request's top-level blocks in prefix order without their marks, and each one's
    mark's lifetime (None: no breakpoint there)."""
    blocks: list[Any] = []
    marks: list[str | None] = []

    def add(block: Any) -> None:
        mark = block.get("cache_control") if isinstance(block, Mapping) else None
        plain = {k: v for k, v in block.items() if k != "cache_control"} if mark else block
        blocks.append(plain)
        marks.append(None if mark is None else str(mark.get("ttl", "5m")))

    for tool in _listed(body.get("tools")):
        add(tool)
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else _listed(system):
        add(block)
    for message in _listed(body.get("messages")):
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        role = message.get("role")
        for block in (
            [{"type": "text", "text": content}] if isinstance(content, str) else _listed(content)
        ):
            add({"role": role, **block} if isinstance(block, Mapping) else block)
    return blocks, marks


def anthropic_cache_usage(
    body: Mapping[str, Any], cache: PromptCache, prompt_tokens: int
) -> dict[str, Any] | None:
    """The usage fields Anthropic adds for a request with breakpoints (None without any): what
    ``cache`` had of its prefix (read), and what it now holds that it did not (written, by
    lifetime); the request's ``prompt_tokens`` shared out by size. The cache is updated."""
    blocks, marks = _prefix(body)
    points = [i for i, mark in enumerate(marks) if mark is not None]
    if not points:
        return None
    keys = _chain(f"anthropic:{body.get('model')}", blocks)
    weights = _weights(blocks)

    def share(i: int) -> int:
        return 0 if i < 0 else prompt_tokens * weights[i] // max(weights[-1], 1)

    looked = {j for i in points for j in range(max(0, i - _LOOKBACK + 1), i + 1)}
    read_at = cache.read(keys, sorted(looked))
    written = {"5m": 0, "1h": 0}
    previous = read_at
    for i in points:
        if i <= read_at:
            continue
        ttl = marks[i] or "5m"
        written[ttl] += share(i) - share(previous)
        cache.write(keys[i], _LIFETIMES[ttl])
        previous = i
    return {
        "cache_read_input_tokens": share(read_at),
        "cache_creation_input_tokens": written["5m"] + written["1h"],
        "cache_creation": {
            "ephemeral_5m_input_tokens": written["5m"],
            "ephemeral_1h_input_tokens": written["1h"],
        },
    }


# -- OpenAI ---------------------------------------------------------------------------------


def openai_cache_usage(
    body: Mapping[str, Any], cache: PromptCache, prompt_tokens: int
) -> int | None:
    """The ``cached_tokens`` OpenAI reports for a chat request with a ``prompt_cache_key``
    (None without one): the longest earlier prefix of its messages under that key, in steps
    of 128 tokens from 1024 on (0 below). Every prefix of this request is cached after it."""
    key = body.get("prompt_cache_key")
    messages = body.get("messages")
    if not isinstance(key, str) or not isinstance(messages, list) or not messages:
        return None
    keys = _chain(f"openai:{body.get('model')}:{key}", messages)
    weights = _weights(messages)
    hit = cache.read(keys, range(len(messages) - 1))
    for k in keys:
        cache.write(k, _OPENAI_LIFETIME)
    if hit < 0:
        return 0
    tokens = prompt_tokens * weights[hit] // max(weights[-1], 1)
    if tokens < _OPENAI_MINIMUM:
        return 0
    return _OPENAI_MINIMUM + (tokens - _OPENAI_MINIMUM) // _OPENAI_STEP * _OPENAI_STEP
