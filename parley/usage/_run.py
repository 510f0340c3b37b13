"""The chat a piece of work belongs to: who made each model call, what it cost, where budgets
stand, and why the chat ended.

Every chat (``initiate_chat``, a queued or nested chat) runs as a :class:`ChatRun`, current in
its context (a ``contextvars`` variable, so concurrent chats never mix and worker threads see
the chat that started them). A chat started inside another one — a nested chat, a chat a tool
or reply function starts — is its child. Each model call the wrapper completes is recorded
once, as an :class:`LLMCall`, in the run current when it was made; a run's usage is its own
calls and its children's, so the outermost chat's usage adds up everything it caused.

The agent a call is charged to is, in order: the agent acting *on behalf of* another
(:func:`acting_for`: a group manager's speaker selection is charged to the manager), the
``agent=`` passed to ``create``, and the agent whose reply is being generated (so a tool that
calls a model is charged to the agent running the tool). ``purpose`` says why the call was made
(``"reply"``, ``"speaker_selection"``, ``"summary"``, ``"tool"``).
"""

from __future__ import annotations

import contextvars
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from .._core.lifetime import Bound
from ._budget import Budget, Spent, exhausted

__all__ = [
    "DETAIL_KEYS",
    "ChatRun",
    "LLMCall",
    "Ledger",
    "acting_for",
    "charged_to",
    "chat_run",
    "check",
    "current_run",
    "gate",
    "ledger",
    "note_end",
    "record_call",
    "reply_scope",
    "watch_budget",
]


# parley's counts beside AutoGen's four, in a call's usage and in usage summaries (a model's
# entry holds them once one of its responses reported them): prompt tokens read from and
# written to the provider's prompt cache, completion tokens spent reasoning.
DETAIL_KEYS = ("cached_tokens", "cache_creation_tokens", "reasoning_tokens")


@dataclass(frozen=True, slots=True)
class LLMCall:
    """One completed model call (or cache hit) and what it cost."""

    chat_id: str | None
    agent: str | None
    model: str
    purpose: str
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost: float
    cached: bool
    start_time: float
    duration: float
    #: Prompt tokens read from / written to the provider's prompt cache, completion tokens
    #: spent reasoning (parts of the counts above; 0 when not reported).
    cached_tokens: int = 0
    cache_creation_tokens: int = 0
    reasoning_tokens: int = 0


class _Watch:
    """A budget applied from a point on: what was spent before it does not count."""

    __slots__ = ("baseline", "budget", "started")

    def __init__(self, budget: Budget, spent: Spent) -> None:
        self.budget = budget
        self.baseline = Spent(spent.cost, spent.tokens, spent.llm_calls)
        self.started = time.monotonic()


class ChatRun:
    """One chat's record (see the module docstring)."""

    is_chat: ClassVar[bool] = True

    __slots__ = (
        "calls",
        "children",
        "end_reason",
        "id",
        "parent",
        "recipient",
        "sender",
        "spent",
        "start_time",
        "stop_reason",
        "watches",
    )

    def __init__(self, sender: str | None, recipient: str | None, parent: ChatRun | None) -> None:
        self.id = uuid.uuid4().hex
        self.parent = parent
        self.sender = sender
        self.recipient = recipient
        self.calls: list[LLMCall] = []
        self.children: list[ChatRun] = []
        self.spent = Spent()
        self.watches: list[_Watch] = []
        self.start_time = time.time()
        self.stop_reason: str | None = None  # a budget, or stop(), ended the chat
        self.end_reason: str | None = None  # the last reason noted for the end of the chat
        if parent is not None:
            parent.children.append(self)

    def lineage(self) -> Iterator[ChatRun]:
        """This run, its parent, and so on up."""
        run: ChatRun | None = self
        while run is not None:
            yield run
            run = run.parent

    def chat_parent(self) -> ChatRun | None:
        """The chat this one runs inside, if any (a :class:`Ledger` above it is no chat)."""
        run = self.parent
        while run is not None and not run.is_chat:
            run = run.parent
        return run

    def all_calls(self) -> list[LLMCall]:
        """The calls of this run and of every run below it, in the order they were recorded
        per run (this run's first)."""
        out: list[LLMCall] = []
        stack = [self]
        while stack:
            run = stack.pop()
            out.extend(run.calls)
            stack.extend(reversed(run.children))
        return out

    def stop(self, reason: str = "stopped") -> None:
        """End the chat, from any thread, at the points a spent budget ends it: before its next
        turn, before its next model request, and between ``max_turns`` turns (the step running
        now finishes). Its chats below stop too; ``termination_reason`` is ``reason``. A chat
        already stopping keeps its first reason."""
        # One attribute store: atomic under the GIL, so no lock. A budget reason noted by a
        # concurrent check() may win instead; either way the chat ends.
        if self.stop_reason is None:
            self.stop_reason = reason

    def stopped(self) -> str | None:
        """Why this chat must stop (its own budget or stop(), or a chat's above it), if so."""
        for run in self.lineage():
            if run.stop_reason is not None:
                return run.stop_reason
        return None

    def termination_reason(self) -> str:
        """Why the chat ended: a budget, else the last reason noted, else ``"no_reply"``."""
        return self.stopped() or self.end_reason or "no_reply"


class Ledger(ChatRun):
    """The record of many chats that are not one chat (``parley.batch``'s batch): its calls
    are theirs, and its budget ends them all, but reports never name it as their parent."""

    __slots__ = ()
    is_chat = False


R = TypeVar("R", bound=ChatRun)

_run: contextvars.ContextVar[ChatRun | None] = contextvars.ContextVar("parley_run", default=None)
_replying: contextvars.ContextVar[Any] = contextvars.ContextVar("parley_replying", default=None)
_on_behalf: contextvars.ContextVar[tuple[Any, str] | None] = contextvars.ContextVar(
    "parley_on_behalf", default=None
)


def current_run() -> ChatRun | None:
    """The chat running in this context, if any."""
    return _run.get()


@contextmanager
def chat_run(sender: str | None, recipient: str | None, budget: Budget | None) -> Iterator[ChatRun]:
    """Run a chat: a new run, child of the current one, current for the block."""
    with _current(ChatRun(sender, recipient, _run.get()), budget) as run:
        yield run


@contextmanager
def _current(run: R, budget: Budget | None) -> Iterator[R]:
    """``run``, watched by ``budget``, current for the block."""
    if budget is not None:
        run.watches.append(_Watch(budget, run.spent))
    token = _run.set(run)
    try:
        yield run
    finally:
        _run.reset(token)


@contextmanager
def ledger(budget: Budget | None) -> Iterator[Ledger]:
    """A :class:`Ledger` current for the block: the chats started in it are its children, so
    its ``budget`` counts all they spend and, once reached, stops them as a chat's budget
    stops that chat."""
    with _current(Ledger(None, None, _run.get()), budget) as run:
        yield run


@contextmanager
def watch_budget(budget: Budget | None) -> Iterator[None]:
    """Apply ``budget`` to the current chat for the block (a group chat manager's budget over
    its rounds); what the chat spent before does not count against it."""
    run = _run.get()
    if budget is None or run is None:
        yield
        return
    watch = _Watch(budget, run.spent)
    run.watches.append(watch)
    try:
        yield
    finally:
        run.watches.remove(watch)


def reply_scope(agent: Any) -> Bound[Any]:
    """Charge calls made in the block (by tools, hooks, reply functions) to ``agent``."""
    return Bound(_replying, agent)


@contextmanager
def acting_for(agent: Any, purpose: str) -> Iterator[None]:
    """Charge calls made in the block to ``agent``, for ``purpose``, whoever makes them."""
    token = _on_behalf.set((agent, purpose))
    try:
        yield
    finally:
        _on_behalf.reset(token)


def _name(agent: Any) -> str | None:
    if agent is None:
        return None
    name = getattr(agent, "name", agent)
    return name if isinstance(name, str) else str(name)


def charged_to(agent: Any) -> tuple[str | None, str]:
    """The agent name a call is charged to, and its purpose (see the module docstring)."""
    behalf = _on_behalf.get()
    if behalf is not None:
        return _name(behalf[0]), behalf[1]
    replying = _replying.get()
    if agent is not None:
        return _name(agent), "reply"
    if replying is not None:
        return _name(replying), "tool"
    return None, "other"


def record_call(
    agent: Any,
    model: str,
    usage: dict[str, Any],
    cost: float,
    cached: bool,
    start: float,
    duration: float,
) -> LLMCall | None:
    """Record a completed call in the current chat (no chat: nothing is recorded)."""
    run = _run.get()
    if run is None:
        return None
    name, purpose = charged_to(agent)
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    total = int(usage.get("total_tokens") or (prompt + completion))
    call = LLMCall(
        run.id,
        name,
        model,
        purpose,
        prompt,
        completion,
        total,
        float(cost or 0.0),
        cached,
        start,
        duration,
        int(usage.get("cached_tokens") or 0),
        int(usage.get("cache_creation_tokens") or 0),
        int(usage.get("reasoning_tokens") or 0),
    )
    run.calls.append(call)
    if not cached:
        for owner in run.lineage():
            owner.spent.add(call.cost, total)
    return call


def check(run: ChatRun | None = None) -> str | None:
    """Whether the chat must stop before its next step: the reason, or None. A run stops when
    it or a chat above it has reached a budget or was stopped (:meth:`ChatRun.stop`); the
    reason is kept on the run whose budget it is."""
    run = run if run is not None else _run.get()
    if run is None:
        return None
    now = time.monotonic()
    for owner in run.lineage():
        if owner.stop_reason is not None:
            return owner.stop_reason
        for watch in owner.watches:
            reason = exhausted(watch.budget, owner.spent.minus(watch.baseline), now - watch.started)
            if reason is not None:
                owner.stop_reason = reason
                return reason
    return None


def gate() -> None:
    """Before a model request: raise :class:`BudgetExceededError` if the current chat must
    stop (the turn that made the request ends there, with no reply)."""
    run = _run.get()
    if run is None:
        return
    reason = check(run)
    if reason is not None:
        from ..exceptions import BudgetExceededError

        raise BudgetExceededError(reason, run.id)


def note_end(reason: str) -> None:
    """Note why the current chat is ending (the last note before it ends is its reason)."""
    run = _run.get()
    if run is not None:
        run.end_reason = reason
