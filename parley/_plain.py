"""Private copies of plain JSON-like data, for memos that must notice any later change.

A memo that remembers a caller's messages keeps :func:`plain_copy` of them and compares the
next call's messages with ``==`` (done in C: several times cheaper than redoing the work it
saves). Only strings, None, and dicts (with string keys) and lists of them are copied; anything
else raises :class:`NotPlain`, and the memo stops before it. Numbers are left out on purpose:
``1 == 1.0 == True``, so equality could not tell a change of type, which the JSON would show.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NotPlain", "SealedMessages", "plain_copy"]

_SCALARS = frozenset({str, type(None)})


class NotPlain(Exception):
    """The value holds something other than plain JSON-like data."""


class SealedMessages(list):  # type: ignore[type-arg]
    """A request's messages, as a memo that owns every dict in them built them: the memo never
    changes one (a changed history gets new dicts), so a dict found in two such lists is the
    same message in both. Code that must notice a changed message (the runtime log, which
    keeps copies) may then compare these by identity, not by content.
    """

    __slots__ = ()


def plain_copy(value: Any) -> Any:
    """A copy of ``value`` sharing only immutable leaves; :class:`NotPlain` if it is not plain."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        copy = {}
        for key, item in value.items():
            if type(key) is not str:
                raise NotPlain
            copy[key] = plain_copy(item)
        return copy
    if kind is list:
        return [plain_copy(item) for item in value]
    raise NotPlain
