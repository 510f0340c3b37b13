"""Which steps a class overrides, decided once per class: the one place that decides it.

AutoGen code customises an agent by overriding one of its steps in the sync form
(``receive``), the async form (``a_receive``), or one of AutoGen's internal helpers
(``_append_oai_message``, ``_match_trigger``, ...). parley writes each step once, as a
coroutine; to honour such an override the core must know, for each class, which form to call.
:func:`decide` answers that when the class is created (``ConversableAgent.__init_subclass__``),
so a turn pays one dict lookup (:func:`of`), never a walk of the class's methods:

- ``sync_steps``: the steps (:data:`STEPS`) whose sync form the core calls, in a worker thread,
  because the class redefines the sync method and keeps the base's async one;
- ``send_chain`` / ``receive_chain`` / ``match_chain``: whether storing a sent message, storing
  and printing a received one, and matching reply-function triggers go through AutoGen's
  helpers (:data:`HELPERS`), because the class overrides one that the step uses.

Any other ``Agent`` implementation is judged on first use: its async step is used when it is a
coroutine function. :func:`sync_only` is the same rule for one method of any class
(``GroupChat.select_speaker``).

Steps taken once per chat or once per model request (the summary's chain, the model call
``_generate_oai_reply_from_client``) are judged at each call by :func:`own` instead: the lookup
costs nothing next to a request, and it also sees a patch of the class or of the agent made
after the class was created (AutoGen's tests patch them so).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._agent_protocol import Agent

__all__ = [
    "HELPERS",
    "HOOK_RUNNERS",
    "STEPS",
    "Overrides",
    "decide",
    "of",
    "own",
    "redefines",
    "sync_only",
]

STEPS = (
    "send",
    "receive",
    "generate_reply",
    "initiate_chat",
    "get_human_input",
    "generate_init_message",
)
"""The agent steps the core calls in their sync form when a class overrides only that one."""

HELPERS = (
    "_message_to_dict",
    "_append_oai_message",
    "_process_received_message",
    "_print_received_message",
    "_is_silent",
    "_match_trigger",
)
"""AutoGen's internal helpers that parley's turn calls only when a class overrides them."""

HOOK_RUNNERS = ("process_last_received_message", "process_all_messages_before_reply")
"""AutoGen's public methods that run an agent's hooks before a reply (and their ``a_`` twins):
the turn calls them only when a class overrides one."""

_SEND_CHAIN = frozenset({"_message_to_dict", "_append_oai_message"})
_MATCH_CHAIN = frozenset({"_match_trigger"})


@dataclass(frozen=True, slots=True)
class Overrides:
    """What the core must call differently for one class (see the module docstring)."""

    sync_steps: frozenset[str]
    send_chain: bool = False
    receive_chain: bool = False
    match_chain: bool = False
    hook_runners: bool = False


_by_class: dict[type, Overrides] = {}


def redefines(cls: type, name: str, base: type) -> bool:
    """Whether ``cls`` redefines attribute ``name`` of ``base``."""
    return getattr(cls, name, None) is not getattr(base, name, None)


def sync_only(cls: type, name: str, base: type) -> bool:
    """Whether ``cls`` redefines the sync method ``name`` of ``base`` and keeps its async twin
    ``a_<name>``: the core must then call the sync one."""
    return redefines(cls, name, base) and not redefines(cls, "a_" + name, base)


def decide(cls: type, base: type) -> Overrides:
    """Decide (and remember) the overrides of ``cls``, ``base`` or a subclass of it.

    Human input runs its sync form unless ``cls`` redefines ``a_get_human_input``: the base's
    async form only runs the sync one in a thread, as in AutoGen, so a UI that overrides
    ``get_human_input`` is reached either way."""
    steps = frozenset(
        name
        for name in STEPS
        if not redefines(cls, "a_" + name, base)
        and (name == "get_human_input" or redefines(cls, name, base))
    )
    helpers = {name for name in HELPERS if redefines(cls, name, base)}
    decided = _by_class[cls] = Overrides(
        steps,
        send_chain=bool(helpers & _SEND_CHAIN),
        receive_chain=bool(helpers - _MATCH_CHAIN),
        match_chain=bool(helpers & _MATCH_CHAIN),
        hook_runners=any(
            redefines(cls, prefix + name, base) for name in HOOK_RUNNERS for prefix in ("", "a_")
        ),
    )
    return decided


def of(agent: object) -> Overrides:
    """The overrides of ``agent``'s class (an agent that is no ``ConversableAgent``: its sync
    steps are those without a coroutine ``a_`` twin)."""
    cls = type(agent)
    decided = _by_class.get(cls)
    if decided is None:
        decided = _by_class[cls] = Overrides(
            frozenset(name for name in STEPS if not _own_coroutine(cls, "a_" + name))
        )
    return decided


def own(obj: object, name: str, default: Callable[..., Any]) -> Callable[..., Any] | None:
    """``obj``'s ``name`` when it is not parley's ``default`` (the function its class carries,
    a method's or a staticmethod's): a subclass's override or a patch; None otherwise."""
    method: Callable[..., Any] | None = getattr(obj, name, None)
    if method is None or method is default or getattr(method, "__func__", None) is default:
        return None
    return method


def _own_coroutine(cls: type, name: str) -> bool:
    """Whether ``cls`` has a coroutine method ``name`` of its own: one inherited from the
    ``Agent`` protocol is only a declaration (a subclass of ``Agent`` that writes only the sync
    ``receive``, as AutoGen's own tests do, is reached through that)."""
    method = getattr(cls, name, None)
    return inspect.iscoroutinefunction(method) and method is not getattr(Agent, name, None)
