"""Values as JSON text: the only format parley's cache backends write or read.

A cache can be written by others (code in a sandbox sharing the directory, another client of
the same Redis), so reading an entry must never run code: no pickle, no class named by the data.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["ForeignEntry", "dumps", "loads"]


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
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError included
        raise ForeignEntry("it is not JSON") from None
