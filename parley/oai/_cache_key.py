"""Cache keys: AutoGen's ``get_key`` (minus credentials), and its SHA-256 computed incrementally.

``get_key(request)`` is the request's JSON with sorted keys, without the endpoint and credential
fields of :data:`NON_CACHE_KEY` and anything else that looks like a credential (see
:mod:`parley._credentials` and the ``openai_utils`` module docstring). The cache stores entries
under ``sha256(get_key(request))``.

A chat's requests grow by a message or two a turn, and encoding the whole history for every
request costs more than the rest of a cached turn. :class:`KeyHasher` gives the same digest,
hashing only what is new: it keeps the hash state after the messages of the previous request,
with a copy of those messages, and resumes from it when the next request starts with equal
messages. Only messages whose values are strings (and dicts and lists of them) are kept that
way: for those, equal means the same JSON, which ``1 == 1.0 == True`` would not guarantee.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from .._credentials import CREDENTIAL_VALUE, looks_secret
from .._plain import NotPlain, SealedMessages, plain_copy

__all__ = ["NON_CACHE_KEY", "KeyHasher", "cache_key", "get_key"]

NON_CACHE_KEY = [
    "api_key",
    "base_url",
    "api_type",
    "api_version",
    "azure_ad_token",
    "azure_ad_token_provider",
    "credentials",
    "tool_config",
]
# Values of these types are request parameters (counts, lists of ids, schemas), never secrets.
_PARAM_TYPES = (bool, int, float, list, tuple, Mapping)
# json.dumps(value, sort_keys=True), without building an encoder per call.
_dumps = json.JSONEncoder(sort_keys=True).encode


def _json_ready(value: Any, where: str) -> Any:
    """``value`` as plain JSON data with credential-like entries dropped; rejects the rest."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if key is not None and not isinstance(key, (str, int, float, bool)):
                raise TypeError(
                    f"cannot build a cache key: config{where} has a key of type "
                    f"{type(key).__name__}; JSON object keys must be strings"
                )
            if looks_secret(key) and not isinstance(item, _PARAM_TYPES):
                continue
            out[key] = _json_ready(item, f"{where}[{key!r}]")
        return out
    if isinstance(value, (list, tuple)):
        return [_json_ready(item, f"{where}[{i}]") for i, item in enumerate(value)]
    raise TypeError(
        f"cannot build a cache key: config{where} is a {type(value).__name__}, which is not "
        "JSON-serialisable; remove it from the request or use cache_seed=None"
    )


def _parts(config: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    """(the request without its messages, JSON-ready and without credentials; its messages).
    Messages are the bulk of a request and hold no credentials: they skip the walk."""
    if not isinstance(config, Mapping):
        raise TypeError(f"get_key expects a dict, got {type(config).__name__}")
    kept = {k: v for k, v in config.items() if k not in NON_CACHE_KEY}
    headers = kept.get("extra_headers")
    if isinstance(headers, Mapping):
        kept["extra_headers"] = {
            name: value
            for name, value in headers.items()
            if not (isinstance(value, str) and CREDENTIAL_VALUE.match(value))
        }
    messages = kept.pop("messages", None)
    return _json_ready(kept, ""), messages


def get_key(config: Mapping[str, Any]) -> str:
    """The cache key of a request: its JSON with sorted keys, minus endpoint and credentials."""
    ready, messages = _parts(config)
    if messages is not None:
        ready["messages"] = messages
    try:
        return _dumps(ready)
    except (TypeError, ValueError):
        if messages is not None:
            _json_ready(messages, "['messages']")  # raises the precise error
        raise


def cache_key(params: Mapping[str, Any]) -> str:
    """The key a response to ``params`` is cached under."""
    import hashlib  # only when caching (4 ms to import)

    return hashlib.sha256(get_key(params).encode()).hexdigest()


class KeyHasher:
    """``cache_key`` for a stream of requests that extend each other's messages.

    Safe to share between threads: what it remembers is replaced whole, never changed.
    """

    def __init__(self) -> None:
        # (JSON before the messages, copies of the messages hashed, the hash state after them)
        self._memo: tuple[bytes, list[Any], Any] | None = None

    def key(self, params: Mapping[str, Any]) -> str:
        """``cache_key(params)``."""
        messages = cast("list[Any]", params.get("messages"))
        ready, _ = _parts(params)
        if type(messages) not in (list, SealedMessages) or any(type(k) is not str for k in ready):
            return cache_key(params)
        try:
            head, tail = _around_messages(ready)
        except (TypeError, ValueError):
            return cache_key(params)  # raises the precise error
        memo = self._memo
        if (
            memo is not None
            and memo[0] == head
            and len(memo[1]) <= len(messages)
            and messages[: len(memo[1])] == memo[1]
        ):
            seen, state = memo[1], memo[2].copy()
        else:
            import hashlib

            seen, state = [], hashlib.sha256(head)
        copies: list[Any] = []
        saved = None
        growing = True  # the copies end at the first message that is not plain
        try:
            for i in range(len(seen), len(messages)):
                message = messages[i]
                if i:
                    state.update(b", ")
                state.update(_dumps(message).encode())
                if growing:
                    try:
                        copies.append(plain_copy(message))
                        saved = state.copy()
                    except NotPlain:
                        growing = False
        except (TypeError, ValueError):
            return cache_key(params)  # raises the precise error
        if saved is not None:
            self._memo = (head, [*seen, *copies], saved)
        state.update(tail)
        return str(state.hexdigest())


def _around_messages(ready: dict[str, Any]) -> tuple[bytes, bytes]:
    """The JSON of ``{**ready, "messages": [...]}`` with sorted keys, before and after the
    messages' items."""
    before: list[str] = []
    after: list[str] = []
    for name in sorted(ready):
        item = f"{_dumps(name)}: {_dumps(ready[name])}"
        (before if name < "messages" else after).append(item)
    head = "{" + "".join(f"{item}, " for item in before) + '"messages": ['
    tail = "]" + "".join(f", {item}" for item in after) + "}"
    return head.encode(), tail.encode()
