"""A store's records as read back: each checked against its MAC and read as JSON before any
of it is used, so a record this host did not write as it stands is refused, never replayed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..exceptions import JournalIntegrityError
from ._keys import Signer

if TYPE_CHECKING:
    from ..agentchat import PendingToolCall
    from ..coding.base import CodeBlock

__all__ = ["PendingInput", "Record", "StepRow", "header_of", "pending_input", "records_of"]

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
    :meth:`BaseChatStore.pending_inputs`).

    An approval carries what waits for it: ``tool_call`` (a ``PendingToolCall``: ``name``,
    ``arguments``, ``call_id``) for a tool registered with ``requires_approval=True``, or
    ``code_blocks`` (``CodeBlock`` s: ``code``, ``language``) for an agent whose
    ``code_execution_config`` requires approval. Answer ``""`` to approve (``resume`` then runs
    exactly that call, once), any other text to reject it with that reason, ``"exit"`` to
    reject it and end the chat."""

    chat_id: str
    agent: str
    prompt: str
    key: str
    tool_call: PendingToolCall | None = field(default=None, hash=False)
    code_blocks: tuple[CodeBlock, ...] | None = field(default=None, hash=False)

    @property
    def is_approval(self) -> bool:
        """Whether the human is asked to approve a tool call or code blocks."""
        return self.tool_call is not None or self.code_blocks is not None


def pending_input(chat_id: str, key: str, asked: Any) -> PendingInput:
    """The pending input a human step's start record ``asked`` describes, checked."""
    if not isinstance(asked, dict) or not isinstance(asked.get("prompt"), str):
        raise JournalIntegrityError(chat_id, key, "is not a human's question")
    try:
        call, blocks = _tool_call(asked.get("tool_call")), _code_blocks(asked.get("code_blocks"))
    except (TypeError, ValueError, KeyError) as e:
        raise JournalIntegrityError(chat_id, key, f"holds no approval it can show ({e})") from e
    return PendingInput(chat_id, str(asked.get("agent")), asked["prompt"], key, call, blocks)


def _tool_call(record: Any) -> PendingToolCall | None:
    if record is None:
        return None
    from ..agentchat import PendingToolCall

    name, arguments, call_id = record["name"], record["arguments"], record.get("call_id")
    if not isinstance(name, str) or not isinstance(arguments, dict):
        raise TypeError("a tool call is {name: str, arguments: {...}, call_id}")
    if call_id is not None and not isinstance(call_id, str):
        raise TypeError(f"a call id is text, got {type(call_id).__name__}")
    return PendingToolCall(name, arguments, call_id)


def _code_blocks(record: Any) -> tuple[CodeBlock, ...] | None:
    if record is None:
        return None
    from ..coding.base import CodeBlock

    if not isinstance(record, list):
        raise TypeError(f"code blocks are a list, got {type(record).__name__}")
    return tuple(CodeBlock.model_validate(block) for block in record)


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
