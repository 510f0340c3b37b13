"""Values as JSON text: the only format parley's cache backends write or read.

A cache can be written by others (code in a sandbox sharing the directory, another client of
the same Redis), so reading an entry must never run code: no pickle, no class named by the data.
"""

from __future__ import annotations

import json
import logging
from typing import Any

__all__ = ["ForeignEntry", "dumps", "loads", "read", "refuse"]


class ForeignEntry(Exception):
    """An entry parley did not write (or that was changed since): it is treated as a miss."""


def dumps(value: Any, backend: str) -> str:
    """``value`` as JSON text; a TypeError naming the type when it is not JSON data."""

    def refuse(obj: Any) -> Any:
        raise TypeError(f"a {type(obj).__name__} is not JSON-serialisable")

    try:
        return json.dumps(value, ensure_ascii=False, default=refuse)
    except (TypeError, ValueError) as error:  # ValueError: a circular reference
        raise TypeError(f"{backend} stores JSON values: {error}") from None


def loads(text: str | bytes) -> Any:
    """The value of JSON ``text``; ForeignEntry when it is not UTF-8 JSON."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError, TypeError):  # TypeError: not text at all
        raise ForeignEntry("it is not JSON") from None


def read(raw: str | bytes, default: Any, log: logging.Logger, cache: str, key: str) -> Any:
    """The value of the entry ``raw`` (read from ``cache`` under ``key``); ``default``, with a
    warning on ``log``, for an entry parley did not write."""
    try:
        return loads(raw)
    except ForeignEntry as refused:
        refuse(log, cache, key, refused)
        return default


def refuse(log: logging.Logger, cache: str, key: str, why: ForeignEntry) -> None:
    """Log that the entry under ``key`` is ignored."""
    log.warning(
        "%s: ignoring the entry for key %r: %s, so parley did not write it", cache, key, why
    )
