"""Cache lookups for the completion client, off the event loop and without reopening files.

Cache backends block (SQLite files, Redis sockets), so every get and set runs on one dedicated
thread, the runtime's ``dedicated_worker("parley-cache")``. It is one thread, not a pool, because
a disk cache's database connection belongs to the thread that opened it: a disk cache that
``cache_seed`` selects is opened once per process, on that thread, and kept open (closed at
exit); reopening it for every lookup, as AutoGen does, cost milliseconds a call. A cache object
the caller passes stays theirs to open and close.

Keys are the SHA-256 of :func:`parley.oai.openai_utils.get_key` (see :mod:`parley.oai._cache_key`):
short, fixed-size, and still covering every request field that shapes the reply (and none of
the credentials).

Values are JSON documents, never pickles: a cache can be written by others (code in a sandbox
sharing the directory, another client of the same Redis), and reading an entry must not run
their code. A response is stored as ``{"parley_cache": 1, "kind": ..., "value": ...}``:

- ``"openai.ChatCompletion"`` / ``"openai.Completion"``: the pydantic model's JSON
  (``model_dump(mode="json", exclude_unset=True)``), extra attributes such as ``cost``
  included, a message's ``parsed`` object left out (a typed reply keeps its text; the object
  is parsed again when it is read: :mod:`parley.oai._typed_reply`);
- ``"namespace"``: a custom client's ``SimpleNamespace`` tree, where every JSON object is
  ``{"namespace": {...}}`` or ``{"dict": {...}}`` and arrays are lists (tuples come back as
  lists).

Reading builds only those types (an openai model that does not validate is built leniently,
as the SDK builds responses from a server's JSON); nothing named by the data is imported or
instantiated. An entry that is not such a document is a miss, with a warning. A response
holding anything else is not cached, with one warning per type.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from .._core.runtime import after_fork, dedicated_worker, keep_until_exit
from ._typed_reply import PARSED

__all__ = [
    "LEGACY_CACHE_DIR",
    "Unstorable",
    "close_disks_under",
    "decode_response",
    "encode_response",
    "location",
    "lookup",
    "open_disk",
    "store",
]

logger = logging.getLogger("parley.oai.client")

FORMAT = 1
LEGACY_CACHE_DIR = ".cache"
# Set on a response by OpenAIWrapper after it is made; they describe this call, not the reply.
_RUNTIME_ATTRIBUTES = frozenset({"message_retrieval_function", "config_id", "pass_filter"})
# What model_dump leaves out of a response: those, and each message's parsed object.
_NOT_STORED: dict[str, Any] = {
    **dict.fromkeys(_RUNTIME_ATTRIBUTES, True),
    "choices": {"__all__": {"message": {PARSED}}},
}
# A tree deeper than this is not a model response; refusing it keeps the recursion bounded.
_MAX_DEPTH = 64
_warned_lock = threading.Lock()
_warned: set[str] = set()
_worker = dedicated_worker("parley-cache")
_seed_caches: dict[str, Any] = {}  # only touched on the worker


@dataclass(frozen=True, slots=True)
class _Seed:
    """The legacy disk cache ``cache_seed`` names: ``./.cache/<seed>``, as in AutoGen."""

    seed: Any


def location(cache: Any, seed: int | str | None) -> Any:
    """Where a request's response is cached: its ``cache`` object, else the disk cache of its
    ``cache_seed``; None when caching is off."""
    if cache is not None:
        return cache
    return None if seed is None else _Seed(seed)


def _open(where: Any) -> Any:
    if type(where) is not _Seed:
        return where
    path = os.path.abspath(os.path.join(LEGACY_CACHE_DIR, str(where.seed)))
    cache = _seed_caches.get(path)
    if cache is None:
        from ..cache import Cache

        cache = _seed_caches[path] = Cache.disk(where.seed, LEGACY_CACHE_DIR)
    return cache


def open_disk(path: str) -> Any:
    """The disk cache in directory ``path``, opened once per process like the seed caches
    (closed at exit, dropped in a forked child). Call it on the cache worker only."""
    key = os.path.abspath(path)
    cache = _seed_caches.get(key)
    if cache is None:
        from ..cache.disk_cache import DiskCache

        cache = _seed_caches[key] = DiskCache(path)
    return cache


def close_disks_under(root: str) -> None:
    """Close the disk caches opened below directory ``root`` (before it is deleted). Call it on
    the cache worker only."""
    top = os.path.abspath(root)
    for path in [p for p in _seed_caches if p == top or p.startswith(top + os.sep)]:
        _seed_caches.pop(path).close()


async def lookup(where: Any, key: str) -> tuple[Any, float | None] | None:
    """The response cached under ``key`` and the cost stored with it, or None (a miss)."""
    return await _worker.run(_load, where, key)


async def store(where: Any, key: str, response: Any, cost: float | None) -> None:
    """Cache ``response`` and its ``cost`` under ``key``, unless it cannot be stored as JSON
    (then warn once per type)."""
    await _worker.run(_store, where, key, response, cost)


def _load(where: Any, key: str) -> tuple[Any, float | None] | None:
    cache = _open(where)
    stored = cache.get(key, None)
    if stored is None:
        return None
    response = decode_response(stored)
    if response is None:
        logger.warning(
            "ignoring the entry for key %s in the %s: it is not a response parley stored; "
            "asking the model instead",
            key,
            type(cache).__name__,
        )
        return None
    cost = getattr(response, "cost", None)
    return response, cost if isinstance(cost, (int, float)) else None


def _store(where: Any, key: str, response: Any, cost: float | None) -> None:
    try:
        document = encode_response(response, cost)
    except Unstorable as problem:
        with _warned_lock:
            first = problem.type_name not in _warned
            _warned.add(problem.type_name)
        if first:
            logger.warning(
                "%s is not cached: cached responses are stored as JSON, and only ChatCompletion, "
                "Completion and SimpleNamespace trees of JSON values can be (this warning is "
                "shown once per type)",
                problem,
            )
        return
    _open(where).set(key, document)


class Unstorable(TypeError):
    """A response that cannot be cached; ``type_name`` is the type in the way."""

    def __init__(self, response: Any, type_name: str, where: str = "") -> None:
        if where:
            message = (
                f"a response of type {type(response).__name__} holding a value of type "
                f"{type_name} (at {where})"
            )
        else:
            message = f"a response of type {type_name}"
        super().__init__(message)
        self.type_name = type_name


def encode_response(response: Any, cost: float | None = None) -> dict[str, Any]:
    """The JSON document caching ``response`` (with ``cost``, when given, as its ``cost``
    attribute); Unstorable names what cannot be stored."""
    document = _encode(response)
    if cost is not None:
        value = document["value"]
        (value["namespace"] if document["kind"] == "namespace" else value)["cost"] = cost
    return document


def _encode(response: Any) -> dict[str, Any]:
    kind = _openai_kind(response)
    if kind is not None:
        from pydantic_core import PydanticSerializationError

        try:
            # warnings=False: a lax server's values (which the SDK keeps as they came) are
            # stored as they are, as JSON, not warned about.
            value = response.model_dump(
                mode="json", exclude_unset=True, exclude=_NOT_STORED, warnings=False
            )
        except PydanticSerializationError:
            name, item = _unserialisable_extra(response)
            raise Unstorable(response, type(item).__name__, f".{name}") from None
        return {"parley_cache": FORMAT, "kind": kind, "value": value}
    if type(response) is SimpleNamespace:
        fields = {k: v for k, v in vars(response).items() if k not in _RUNTIME_ATTRIBUTES}
        value = _encode_tree(response, SimpleNamespace(**fields), "", 0)
        return {"parley_cache": FORMAT, "kind": "namespace", "value": value}
    raise Unstorable(response, type(response).__name__)


def decode_response(document: Any) -> Any:
    """The response ``document`` stores, or None if it is not a document parley wrote."""
    if not isinstance(document, dict) or document.get("parley_cache") != FORMAT:
        return None
    kind, value = document.get("kind"), document.get("value")
    try:
        if kind == "namespace":
            response = _decode_tree(value, 0)
            return response if type(response) is SimpleNamespace else None
        model = _openai_models().get(kind) if isinstance(kind, str) else None
        if model is None or not isinstance(value, dict):
            return None
        from pydantic import ValidationError

        try:
            return model.model_validate(value)
        except ValidationError:
            # What the SDK accepted from a lax server (it builds responses without validating)
            # must replay too; "_fields_set" would be taken for construct()'s own argument.
            return model.construct(**{k: v for k, v in value.items() if k != "_fields_set"})
    except (_Malformed, TypeError, ValueError, RecursionError):
        return None


class _Malformed(Exception):
    pass


def _openai_models() -> dict[str, Any]:
    from openai.types import Completion
    from openai.types.chat import ChatCompletion

    return {"openai.ChatCompletion": ChatCompletion, "openai.Completion": Completion}


def _openai_kind(response: Any) -> str | None:
    # Checked by module first so that a custom client's response does not import openai.
    if type(response).__module__.startswith("openai."):
        for kind, model in _openai_models().items():
            if type(response) is model:
                return kind
    return None


def _unserialisable_extra(response: Any) -> tuple[str, Any]:
    extra = getattr(response, "__pydantic_extra__", None) or {}
    for name, item in extra.items():
        if name not in _RUNTIME_ATTRIBUTES and not _is_json_value(item):
            return name, item
    return "?", response  # a field pydantic could not serialise; name the response


def _is_json_value(item: Any) -> bool:
    if item is None or isinstance(item, (str, int, float, bool)):
        return True
    if isinstance(item, (list, tuple)):
        return all(_is_json_value(i) for i in item)
    if isinstance(item, dict):
        return all(isinstance(k, str) and _is_json_value(v) for k, v in item.items())
    return False


def _encode_tree(response: Any, node: Any, where: str, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise Unstorable(response, f"tree deeper than {_MAX_DEPTH} levels", where)
    if node is None or type(node) in (str, int, float, bool):
        return node
    if type(node) in (list, tuple):
        return [
            _encode_tree(response, item, f"{where}[{i}]", depth + 1) for i, item in enumerate(node)
        ]
    if type(node) in (SimpleNamespace, dict):
        namespace = type(node) is SimpleNamespace
        out = {}
        for name, item in (vars(node) if namespace else node).items():
            if namespace and name == PARSED and where.endswith(".message"):
                continue
            if type(name) is not str:
                raise Unstorable(response, f"dict key of type {type(name).__name__}", where)
            step = f".{name}" if namespace else f"[{name!r}]"
            out[name] = _encode_tree(response, item, where + step, depth + 1)
        return {"namespace" if namespace else "dict": out}
    raise Unstorable(response, type(node).__name__, where)


def _decode_tree(node: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise _Malformed
    if node is None or type(node) in (str, int, float, bool):
        return node
    if type(node) is list:
        return [_decode_tree(item, depth + 1) for item in node]
    if type(node) is dict and len(node) == 1:
        ((tag, fields),) = node.items()
        if type(fields) is dict:
            decoded = {name: _decode_tree(item, depth + 1) for name, item in fields.items()}
            if tag == "dict":
                return decoded
            if tag == "namespace":
                return SimpleNamespace(**decoded)
    raise _Malformed


@atexit.register
def _close_seed_caches() -> None:
    if not _seed_caches:
        return

    def close_all() -> None:
        caches = list(_seed_caches.values())
        _seed_caches.clear()
        for cache in caches:
            cache.close()

    try:
        _worker.call(close_all, timeout=5)
    except Exception:  # the process is ending; nothing to report to
        pass


def _forget_seed_caches() -> None:
    # The parent's database connections: closing them here could disturb the parent's locks.
    keep_until_exit(*_seed_caches.values())
    _seed_caches.clear()


after_fork(_forget_seed_caches)
