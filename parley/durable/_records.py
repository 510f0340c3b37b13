"""A store's records as read back: each checked against its MAC and read as JSON before any
of it is used, so a record this host did not write as it stands is refused, never replayed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..exceptions import JournalIntegrityError
from ._keys import Signer

__all__ = ["PendingInput", "Record", "StepRow", "header_of", "records_of"]

StepRow = tuple[str, int, str | None, str | None, bool, str | None]
"""A stored step: ``(key, seq, start JSON, result JSON, done, MAC)``."""

UNSIGNED = (
    "carries no MAC: a parley older than journal keys wrote it, or something removed its MAC. "
    "If nothing but your own parley could have written this store since, sign its records "
    "once with store.adopt_unsigned(chat_id) and resume again; otherwise do not resume it"
)
FORGED = (
    "does not match its MAC: the record was forged, altered, or moved to another chat or "
    "step (or written with another key: open the store with the key it was written with)"
)


@dataclass(frozen=True)
class PendingInput:
    """A human input a durable chat asked for and nobody answered yet (see
    :meth:`BaseChatStore.pending_inputs`)."""

    chat_id: str
    agent: str
    prompt: str
    key: str


@dataclass(frozen=True)
class Record:
    """A checked step: its stored texts and what they hold."""

    key: str
    seq: int
    start_text: str | None
    result_text: str | None
    done: bool
    start: Any
    result: Any


def header_of(signer: Signer, chat_id: str, text: str, mac: str | None) -> dict[str, Any]:
    """A chat's header, checked."""
    if mac is None:
        raise JournalIntegrityError(chat_id, None, UNSIGNED)
    if not Signer.same(mac, signer.header(chat_id, text)):
        raise JournalIntegrityError(chat_id, None, FORGED)
    value = _json(chat_id, None, text)
    if not isinstance(value, dict):
        raise JournalIntegrityError(chat_id, None, f"is not a JSON object: {text[:80]!r}")
    return value


def records_of(signer: Signer, chat_id: str, rows: list[StepRow]) -> list[Record]:
    """The steps ``rows``, checked, in order."""
    out = []
    for key, seq, start, result, done, mac in rows:
        texts = (start, result, mac)
        if not all(t is None or isinstance(t, str) for t in texts) or type(seq) is not int:
            raise JournalIntegrityError(chat_id, str(key), "is not a step record (its types)")
        if mac is None:
            raise JournalIntegrityError(chat_id, key, UNSIGNED)
        if not Signer.same(mac, signer.step(chat_id, key, seq, start, result, done)):
            raise JournalIntegrityError(chat_id, key, FORGED)
        out.append(
            Record(
                key,
                seq,
                start,
                result,
                done,
                _json(chat_id, key, start),
                _json(chat_id, key, result),
            )
        )
    return out


def _json(chat_id: str, key: str | None, text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as e:
        raise JournalIntegrityError(chat_id, key, f"is not JSON ({e})") from e
