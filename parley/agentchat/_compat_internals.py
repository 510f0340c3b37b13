"""AutoGen's private ``ConversableAgent`` helpers, kept for compatibility.

Contrib modules, ``GroupChatManager`` and third-party subclasses call (and override) these
underscored methods: ``_append_oai_message``, ``_message_to_dict``, ``_process_received_message``,
``_print_received_message``, ``_is_silent``, ``_match_trigger``, ``_wrap_function``, the
carryover helpers and ``_raise_exception_on_async_reply_functions`` (their AutoGen behaviour is
pinned by tests/agentchat/test_internals_compat.py).
Each is written as the method it is on ``ConversableAgent`` (its first parameter is the agent,
``self``), a thin face over the step parley already has (``AgentState.store``,
``_registry.match_trigger``, ``_tools.execution_wrapper``, ``_chat_flow.with_carryover``), so the
rules exist once.

**Overrides.** parley's own turn (``_turn``) stores and prints messages without these method
calls (they would cost every chat). A subclass that overrides one of ``_overrides.HELPERS`` gets
AutoGen's chain instead (``a_send`` -> ``_append_oai_message`` -> ``_message_to_dict``;
``a_receive`` -> ``_process_received_message`` -> ...), decided once per class by
``_overrides``, so only such classes pay for it. Their steps are user code that may block
(``MultimodalConversableAgent``'s ``_message_to_dict`` loads images), so the turn runs the chain
in a worker thread like any other sync override. The summary's helpers (``_summarize_chat``
and the methods it calls) are in ``_summary``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ..exceptions import InvalidCarryOverType
from . import _registry
from ._chat_flow import with_carryover
from ._client_reply import generate_oai_reply_from_client
from ._message_check import check_message
from ._messages import nothing_to_store
from ._tools import execution_wrapper
from ._turn import is_silent, render

__all__ = [
    "append_oai_message",
    "appender",
    "generate_oai_reply_from_client",
    "handle_carryover",
    "is_silent",
    "match_trigger",
    "message_to_dict",
    "print_received_message",
    "process_carryover",
    "process_multimodal_carryover",
    "process_received_message",
    "raise_exception_on_async_reply_functions",
    "wrap_function",
]

F = TypeVar("F", bound=Callable[..., Any])

# -- storing and printing (AutoGen's rules: tests/agentchat/test_spec_messages.py) -------------


def message_to_dict(message: Any) -> dict[str, Any]:
    """A message as a dict: a str as ``{"content": s}``, a dict as it is, an openai message
    object through ``model_dump`` (AutoGen's ``dict(x)`` kept its tool calls as objects),
    anything else through ``dict``."""
    if isinstance(message, str):
        return {"content": message}
    if isinstance(message, dict):
        return message
    dump = getattr(message, "model_dump", None)
    if callable(dump):
        return dict(dump(exclude_none=True))
    return dict(message)


def append_oai_message(
    self: Any, message: Any, role: str, conversation_id: Any, is_sending: bool | None = None
) -> bool:
    """Store ``message`` in the history with ``conversation_id`` and return True; return False
    and store nothing if it has neither content nor a call. parley's check comes first: a
    message no request could carry raises ``InvalidMessageError`` (README).

    ``is_sending`` is AutoGen 0.2.40's; 0.2.35 called this without it, its ``role`` telling
    the direction (``"assistant"`` when sending, ``"user"`` when receiving), so that is the
    default."""
    if is_sending is None:
        is_sending = role == "assistant"
    stored = self.state.store(
        conversation_id,
        self._message_to_dict(message),
        sending=is_sending,
        own_name=self.name,
        role=role,
    )
    return stored is not None


def appender(self: Any) -> Callable[[Any, str, Any, bool], bool]:
    """This agent's ``_append_oai_message``, called with ``is_sending`` when it takes one (an
    override written for AutoGen 0.2.35 takes ``(message, role, conversation_id)`` only)."""
    method = self._append_oai_message
    if _takes_is_sending(getattr(method, "__func__", method)):
        return method  # type: ignore[no-any-return]
    return lambda message, role, conversation_id, is_sending: method(message, role, conversation_id)


@functools.lru_cache(maxsize=256)
def _takes_is_sending(function: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return True
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return True
    return "is_sending" in {p.name for p in params} or len(params) >= 5


def process_received_message(self: Any, message: Any, sender: Any, silent: Any) -> None:
    """``receive``'s first step: store (``InvalidMessageError``, a ValueError, if there is
    nothing to store), then print unless silent."""
    if not appender(self)(message, "user", sender, False):
        nothing_to_store(False, self.name, getattr(sender, "name", ""), message)
    if not self._is_silent(sender, silent):
        self._print_received_message(message, sender)


def print_received_message(self: Any, message: Any, sender: Any, skip_head: bool = False) -> None:
    """Print a received message as parley's turn does (``skip_head``: without the
    ``sender (to receiver):`` line and the blank line after it)."""
    from ..io import IOStream

    shown = check_message(
        self._message_to_dict(message),
        sending=False,
        own_name=self.name,
        partner_name=getattr(sender, "name", ""),
        quiet=True,  # stored (and warned about) already: here only what is printed is repaired
    )
    IOStream.get_default().print(render(self, shown, sender, skip_head), flush=True)


def match_trigger(self: Any, trigger: Any, sender: Any) -> bool:
    """Whether a reply function registered with ``trigger`` applies to ``sender``."""
    return _registry.match_trigger(trigger, sender)


# -- carryover (part 1, 2.8; part 2, 18.2) ----------------------------------------------------


def process_carryover(self: Any, content: str, kwargs: Mapping[str, Any]) -> str:
    """``content`` + ``"\\nContext: \\n"`` + the carryover text (``content`` without one)."""
    return with_carryover(content, kwargs.get("carryover"))


def process_multimodal_carryover(
    self: Any, content: list[Any], kwargs: Mapping[str, Any]
) -> list[Any]:
    """``content`` with a first text part holding ``"\\nContext: \\n"`` + the carryover."""
    return [{"type": "text", "text": self._process_carryover("", kwargs)}, *content]


def handle_carryover(self: Any, message: Any, kwargs: Mapping[str, Any]) -> Any:
    """The first message with the carryover (``kwargs["carryover"]``) added; a dict is copied,
    never changed. Subclasses that build their own first message call this."""
    if not kwargs.get("carryover"):
        return message
    if isinstance(message, str):
        return self._process_carryover(message, kwargs)
    if isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, str):
            return {**message, "content": self._process_carryover(content, kwargs)}
        if isinstance(content, list):
            return {**message, "content": self._process_multimodal_carryover(content, kwargs)}
        return message
    # AutoGen's text, though it is the message that has the wrong type.
    raise InvalidCarryOverType("Carryover should be a string or a list of strings.")


# -- tools and reply functions (18.1, 18.6) ----------------------------------------------------


def wrap_function(self: Any, func: F) -> F:
    """What ``register_for_execution`` stores for ``func``: its tool-call wrapper
    (``_tools.execution_wrapper``), with ``_origin`` = ``func``."""
    return execution_wrapper(func)  # type: ignore[return-value]


def raise_exception_on_async_reply_functions(self: Any) -> None:
    """RuntimeError naming the async reply functions registered without
    ``ignore_async_in_sync_chat=True`` (built-ins are exempt).

    parley's sync chats run async reply functions (README: sync and async both work
    everywhere), so ``initiate_chat`` does not call this; it is kept for code that does."""
    names = [
        getattr(entry.func, "__name__", repr(entry.func))
        for entry in self._reply_func_list
        if entry.is_async and not entry.builtin and not entry.ignore_async_in_sync_chat
    ]
    if names:
        raise RuntimeError(
            "Async reply functions can only be used with ConversableAgent.a_initiate_chat(). "
            "The following async reply functions are found: " + ", ".join(names)
        )
