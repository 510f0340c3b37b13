"""Which chat the current context is resuming, and its policy for uncertain tool calls: set
by :func:`parley.durable.a_resume`, read by a store when the chat opens its journal."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._core import journal as _journal
from .._core.calls import call_user
from ..exceptions import UncertainToolCallError

__all__ = ["Resuming", "decide", "resuming"]

UncertainPolicy = Callable[[_journal.UncertainCall], Any]


@dataclass(frozen=True)
class Resuming:
    chat_id: str
    on_uncertain_tool: UncertainPolicy | None


resuming: contextvars.ContextVar[Resuming | None] = contextvars.ContextVar(
    "parley_resuming", default=None
)


async def decide(policy: UncertainPolicy | None, call: _journal.UncertainCall) -> str:
    """``policy``'s answer for ``call`` ("rerun", "skip" or a result text); without a policy,
    UncertainToolCallError."""
    if policy is None:
        raise UncertainToolCallError(call.name, call.call_id, call.arguments)
    choice = await call_user(policy, call)
    if not isinstance(choice, str):
        raise TypeError(
            f"on_uncertain_tool must return 'rerun', 'skip' or a str result, got {choice!r}"
        )
    return choice
