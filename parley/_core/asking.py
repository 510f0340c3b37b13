"""What an agent is asking its human right now: for whoever shows the question.

While an agent waits for its human (``agentchat._human.ask_human``), :func:`current` gives the
:class:`Question`: which agent asks, about whose message, and, for an approval, the tool call
or the code blocks waiting for it, as plain JSON (the shape a durable chat's journal records
beside the question). An ``IOStream`` that puts questions in front of a person (a run's input
requests, a page) reads it in its ``input``; the question is current in the context that asks,
and in the worker thread ``get_human_input`` runs in (threads started with the context copied).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = ["Question", "asking", "current"]


@dataclass(frozen=True)
class Question:
    """A question an agent puts to its human.

    ``tool_call`` (``{"name", "arguments", "call_id"}``) is set when a call of a tool that
    requires approval waits; ``code_blocks`` (``[{"language", "code"}, ...]``) when code that
    requires approval waits; both None for the agent's usual question."""

    agent: str
    sender: str | None
    tool_call: Mapping[str, Any] | None = None
    code_blocks: Sequence[Mapping[str, str]] | None = None

    @property
    def is_approval(self) -> bool:
        return self.tool_call is not None or self.code_blocks is not None

    def approval(self) -> dict[str, Any]:
        """What waits for approval, as the journal records it beside the question (``{}`` for
        a question that is no approval)."""
        if self.tool_call is not None:
            return {"tool_call": dict(self.tool_call)}
        if self.code_blocks is not None:
            return {"code_blocks": [dict(block) for block in self.code_blocks]}
        return {}


_current: contextvars.ContextVar[Question | None] = contextvars.ContextVar(
    "parley_asking", default=None
)


def current() -> Question | None:
    """The question the agent of this context is waiting on, if any."""
    return _current.get()


@contextmanager
def asking(question: Question) -> Iterator[None]:
    """Make ``question`` current while the body asks it."""
    token = _current.set(question)
    try:
        yield
    finally:
        _current.reset(token)
