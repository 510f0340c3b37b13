"""The reply-function list and the hook lists of an agent.

One list serves sync and async chats: a reply function or hook may be a plain function or a
coroutine function and runs either way (AutoGen skipped the async ones in sync chats and the
sync ones in async chats). Built-in replies are registered under their public sync name (so
``replace_reply_func(ConversableAgent.generate_oai_reply, ...)`` works) and run through their
async implementation.
"""

from __future__ import annotations

import copy
import logging
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._agent_protocol import is_agent as _is_agent
from .._core.calls import call_user, is_async_callable
from ..exceptions import SenderRequired

if TYPE_CHECKING:
    from .._agent_protocol import Agent as _Agent
    from ..types import Message
    from ._state import AgentCore

__all__ = [
    "HOOKABLE",
    "HookLists",
    "ReplyEntry",
    "builtin_reply",
    "check_trigger_type",
    "insert_reply",
    "match_trigger",
]

logger = logging.getLogger(__name__)

# Each hook point, with its AutoGen twin name; hooks under either name run at that point.
HOOKABLE = {
    "process_last_received_message": "process_last_received_message",
    "a_process_last_received_message": "process_last_received_message",
    "process_all_messages_before_reply": "process_all_messages_before_reply",
    "a_process_all_messages_before_reply": "process_all_messages_before_reply",
    "process_message_before_send": "process_message_before_send",
    "a_process_message_before_send": "process_message_before_send",
}


def match_trigger(trigger: Any, sender: Any) -> bool:
    """Whether ``trigger`` (a class, name, agent, callable, list, or None in a list) matches."""
    from .agent import Agent

    if trigger is None:
        return sender is None
    if isinstance(trigger, str):
        if sender is None:
            raise SenderRequired()
        return bool(trigger == sender.name)
    if trigger is Agent:
        return sender is not None and _is_agent(sender)
    if isinstance(trigger, type):
        return isinstance(sender, trigger)
    if isinstance(trigger, list):
        return any(match_trigger(t, sender) for t in trigger)
    if _is_agent(trigger):
        return bool(trigger == sender)
    if callable(trigger):
        verdict = trigger(sender)
        if not isinstance(verdict, bool):
            raise AssertionError(f"trigger {trigger} must return a boolean value.")
        return verdict
    raise ValueError(f"Unsupported trigger type: {type(trigger)}")


def check_trigger_type(trigger: Any) -> None:
    from .agent import Agent

    if not isinstance(trigger, (type, str, Agent, list)) and not callable(trigger):
        raise ValueError(
            "trigger must be a class, a string, an agent, a callable or a list; "
            f"got {trigger!r} (write [None] to match a missing sender)"
        )


@dataclass
class ReplyEntry:
    """A registered reply function. ``func`` is what users see and compare; ``impl`` is what
    runs (the same for user functions; the async implementation for built-ins)."""

    trigger: Any
    func: Callable[..., Any]
    impl: Callable[..., Any]
    config: Any = None
    init_config: Any = None
    reset_config: Callable[[Any], None] | None = None
    ignore_async_in_sync_chat: bool = False
    builtin: bool = False
    # Places this entry takes in AutoGen's numbering of ``position``, where each built-in reply
    # is listed twice (an async twin and a sync one).
    slots: int = 1
    is_async: bool = field(init=False)

    def __post_init__(self) -> None:
        self.is_async = is_async_callable(self.impl)

    def replace(self, reply_func: Callable[..., Any]) -> None:
        """Run ``reply_func`` in this entry's place (``replace_reply_func``)."""
        self.func = self.impl = reply_func
        self.builtin = False
        self.is_async = is_async_callable(reply_func)

    def matches_func(self, fn: Any) -> bool:
        return fn is self.func or fn is self.impl or fn == self.func

    def reset(self) -> None:
        if self.reset_config is not None:
            self.reset_config(self.config)
        else:
            self.config = copy.copy(self.init_config)

    async def run(
        self, agent: AgentCore, messages: list[Message], sender: _Agent | None
    ) -> tuple[bool, Any]:
        if self.builtin:
            result = await self.impl(agent, messages=messages, sender=sender, config=self.config)
        else:
            result = await call_user(
                self.impl, agent, messages=messages, sender=sender, config=self.config
            )
        # Any pair unpacks, as in AutoGen: ``[True, reply]`` is as good as a tuple.
        if not (
            isinstance(result, Sequence)
            and not isinstance(result, (str, bytes, bytearray))
            and len(result) == 2
        ):
            name = getattr(self.func, "__name__", repr(self.func))
            raise TypeError(
                f"reply function {name} must return (final: bool, reply), got {result!r}"
            )
        final, reply = result
        return bool(final), reply


def builtin_reply(
    trigger: Any,
    public: Callable[..., Any],
    impl: Callable[..., Any],
    config: Any = None,
    reset_config: Callable[[Any], None] | None = None,
) -> ReplyEntry:
    """A built-in reply: listed (and replaced, excluded) under its ``public`` sync method, run
    through its async ``impl``, and two places in AutoGen's ``position`` numbering, where each
    built-in had an async and a sync twin. Its ``config`` is kept as given, not copied."""
    return ReplyEntry(
        trigger,
        public,
        impl,
        config=config,
        init_config=config,
        reset_config=reset_config,
        builtin=True,
        slots=2,
    )


def insert_reply(entries: list[ReplyEntry], entry: ReplyEntry, position: int) -> None:
    """Insert ``entry`` at AutoGen's ``position``, in whose numbering each built-in reply
    counts twice (AutoGen listed an async and a sync twin): the default 2 of nested chats
    still means "right after the termination check"."""
    taken = 0
    for i, existing in enumerate(entries):
        if taken >= position:
            entries.insert(i, entry)
            return
        taken += existing.slots
    entries.append(entry)


@dataclass
class HookLists:
    """The six AutoGen hook lists, kept by their names; see ``HOOKABLE``."""

    lists: dict[str, list[Callable[..., Any]]] = field(
        default_factory=lambda: {name: [] for name in HOOKABLE}
    )

    def add(self, hookable_method: str, hook: Callable[..., Any]) -> None:
        assert hookable_method in HOOKABLE, f"{hookable_method} is not a hookable method."
        hooks = self.lists[hookable_method]
        assert hook not in hooks, f"{hook} is already registered as a hook."
        expected_async = hookable_method.startswith("a_")
        hook_async = is_async_callable(hook)
        if expected_async != hook_async:
            # AutoGen's warning (and text): there the hook would run in the other kind of chat
            # only; parley runs it in both, but code written for AutoGen checks for it.
            kind = "asynchronous" if hook_async else "synchronous"
            context = "asynchronous" if expected_async else "synchronous"
            name = getattr(hook, "__name__", repr(hook))
            warnings.warn(
                f"Hook '{name}' is {kind}, but it's being registered in a {context} context "
                f"('{hookable_method}'). Ensure the hook matches the expected execution context.",
                UserWarning,
                stacklevel=3,
            )
        hooks.append(hook)

    def at(self, point: str) -> list[Callable[..., Any]]:
        """Every hook for a point (sync-named list first, then the a_-named one)."""
        return self.lists[point] + self.lists["a_" + point]

    async def run(self, point: str, *args: Any, **kwargs: Any) -> Any:
        """Thread a value through the point's hooks; returns the last hook's result."""
        value: Any = args[0] if args else kwargs.get("message")
        for hook in self.at(point):
            if args:
                value = await _call_hook(hook, value)
            else:
                kwargs["message"] = value
                value = await _call_hook(hook, **kwargs)
        return value

    async def before_reply(self, messages: list[Message]) -> list[Message]:
        """What the reply functions see of ``messages``: the last message's content through the
        ``process_last_received_message`` hooks (skipped for function calls, templates,
        non-text content and ``"exit"``), then the whole list through the
        ``process_all_messages_before_reply`` hooks."""
        return await self.all_messages(await self.last_received(messages))

    async def last_received(self, messages: list[Message]) -> list[Message]:
        """``messages`` with the last one's content through the ``process_last_received_message``
        hooks (see :meth:`before_reply`); the list itself is never changed."""
        if self.at("process_last_received_message") and messages:
            last = messages[-1]
            content = last.get("content")
            hookable = not (last.get("function_call") or last.get("context"))
            if hookable and isinstance(content, (str, list)) and content != "exit":
                new = await self.run("process_last_received_message", content)
                if new != content:
                    # A copy: hooks change what the model sees, not the stored history.
                    messages = [*messages[:-1], {**last, "content": new}]
        return messages

    async def all_messages(self, messages: list[Message]) -> list[Message]:
        """``messages`` through the ``process_all_messages_before_reply`` hooks."""
        if self.at("process_all_messages_before_reply") and messages is not None:
            messages = await self.run("process_all_messages_before_reply", messages)
        return messages


async def _call_hook(hook: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    # A plain hook runs in a worker thread like any user callback: hooks such as AutoGen's
    # Teachability make blocking LLM calls, which must not stall (or deadlock) the loop.
    return await call_user(hook, *args, **kwargs)
