"""AutoGen's logging helpers: ``get_current_ts`` and ``to_dict``.

``to_dict`` makes anything JSON-safe as AutoGen's does (agents' constructor arguments, model
responses, configs): dicts, lists, tuples and objects' attributes walked all the way down, the
keys in ``exclude`` left out at every level, ``no_recursive`` instances and callables as text.
With what AutoGen lacked: credentials are always dropped (see ``parley.logger._secrets``),
cycles and object graphs deeper than 100 levels end in a short text instead of a
``RecursionError``, pydantic models are dumped as their fields, and objects that hold
credentials out of sight (HTTP clients, bytes) are shown by type only.
"""

from __future__ import annotations

import dataclasses
import datetime
import inspect
from collections.abc import Mapping
from typing import Any

from ._secrets import is_secret_item, remember_value

__all__ = ["get_current_ts", "to_dict"]

# Deeper than any data a chat logs; it stops a deep object graph before Python's recursion limit.
_MAX_DEPTH = 100
# Types whose attributes may carry credentials (headers, auth flows): shown by type only.
_OPAQUE_MODULES = ("httpx", "openai", "requests", "urllib3", "aiohttp", "ssl", "socket")


def get_current_ts() -> str:
    """The current UTC time as AutoGen writes it: ``2024-05-01 12:00:00.123456``."""
    return format_ts(datetime.datetime.now(datetime.timezone.utc).timestamp())


_last_second: tuple[int, str] = (-1, "")


def format_ts(seconds: float) -> str:
    """A ``time.time()`` value in :func:`get_current_ts`'s format."""
    # Every record has a timestamp and strftime is slow: the date and time to the second are
    # formatted once per second, the microseconds appended.
    global _last_second
    whole = int(seconds // 1)
    micros = round((seconds - whole) * 1_000_000)
    if micros >= 1_000_000:
        whole, micros = whole + 1, micros - 1_000_000
    second, text = _last_second
    if second != whole:
        moment = datetime.datetime.fromtimestamp(whole, datetime.timezone.utc)
        text = moment.strftime("%Y-%m-%d %H:%M:%S")
        _last_second = (whole, text)
    return f"{text}.{micros:06d}"


def to_dict(
    obj: Any,
    exclude: tuple[str, ...] = (),
    no_recursive: tuple[Any, ...] = (),
) -> Any:
    """``obj`` as JSON-safe data: dicts, lists and objects walked (minus the keys in
    ``exclude`` and every credential), ``no_recursive`` instances as ``str``, callables as
    their source (their name when it cannot be read)."""
    return _Walk(frozenset(exclude), no_recursive).value(obj, 0)


class _Walk:
    def __init__(self, exclude: frozenset[str], no_recursive: tuple[Any, ...]) -> None:
        self.exclude = exclude
        self.no_recursive = no_recursive
        self.seen: set[int] = set()

    def value(self, obj: Any, depth: int) -> Any:
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return obj
        if self.no_recursive and isinstance(obj, self.no_recursive):
            return str(obj)
        if isinstance(obj, (bytes, bytearray, memoryview)):
            return f"<{type(obj).__name__}: {len(obj)} bytes>"
        if depth >= _MAX_DEPTH or id(obj) in self.seen:
            return f"<{type(obj).__qualname__}>"
        if _opaque(obj):
            return f"<{type(obj).__module__}.{type(obj).__qualname__}>"
        self.seen.add(id(obj))
        try:
            return self._compound(obj, depth + 1)
        finally:
            self.seen.discard(id(obj))

    def _compound(self, obj: Any, depth: int) -> Any:
        if type(obj) is dict or isinstance(obj, Mapping):
            return self.mapping(obj.items(), depth)
        if type(obj) is list or isinstance(obj, (list, tuple, set, frozenset)):
            return [self.value(v, depth) for v in obj]
        if isinstance(obj, type) or inspect.isroutine(obj) or callable(obj):
            return _source(obj)
        dump = getattr(obj, "model_dump", None)
        if callable(dump):  # a pydantic model (a response, a config)
            try:
                return self.mapping(dump().items(), depth)
            except Exception:
                pass
        if dataclasses.is_dataclass(obj):
            return self.mapping(
                ((f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)), depth
            )
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            return self.mapping(list(attrs.items()), depth)
        return str(obj) if isinstance(obj, (datetime.date, datetime.time)) else repr(obj)

    def mapping(self, items: Any, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, item in items:
            if is_secret_item(key, item):
                remember_value(str(key), item)  # dropped; scrubbed if seen elsewhere
                continue
            if key in self.exclude:
                continue
            if self.no_recursive and isinstance(item, self.no_recursive):
                out[str(key)] = str(item)
            else:
                out[str(key)] = self.value(item, depth)
        return out


def _opaque(obj: Any) -> bool:
    module = type(obj).__module__ or ""
    return module.split(".", 1)[0] in _OPAQUE_MODULES and not hasattr(obj, "model_dump")


def _source(obj: Any) -> str:
    try:
        return inspect.getsource(obj).strip()
    except (OSError, TypeError):
        return getattr(obj, "__qualname__", None) or repr(obj)
