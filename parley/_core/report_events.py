"""The point reports (events) of :mod:`parley._core.reports`, and the two facts kept in the
context for listeners: who is asking a human (:func:`asking_human`) and whether messages are a
group chat manager's relayed copies (:func:`relaying`). :mod:`parley._core.reports` names them
all; report points import them from there.

As with the steps, nothing is built while nobody listens.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, Literal, NamedTuple, TypedDict

from .events import Event, emit, listening

__all__ = [
    "AgentCreated",
    "AgentCreatedEvent",
    "ClientCreated",
    "ClientCreatedEvent",
    "HumanAsk",
    "ReceivedMessage",
    "ReceivedMessageEvent",
    "TokenDelta",
    "TokenDeltaEvent",
    "WrapperCreated",
    "WrapperCreatedEvent",
    "agent_created",
    "asking_human",
    "client_created",
    "current_ask",
    "name_of",
    "received_message",
    "relaying",
    "token_delta",
    "wrapper_created",
]


def name_of(agent: Any) -> str | None:
    name = getattr(agent, "name", None)
    return name if name is None or isinstance(name, str) else str(name)


# -- events -----------------------------------------------------------------------------------


class ReceivedMessage(TypedDict):
    message: Any  # as the sender sent it: a str or a message dict
    sender: str | None
    valid: bool
    relayed: bool  # a group chat's copy of a member's message, passed on by its manager


class ReceivedMessageEvent(Event):
    """``source``: the agent that received the message (and stored it)."""

    __slots__ = ()
    name: ClassVar[Literal["received_message"]] = "received_message"
    data: ReceivedMessage


def received_message(agent: Any, message: Any, sender: Any) -> None:
    if listening():
        data: ReceivedMessage = {
            "message": message,
            "sender": name_of(sender),
            "valid": True,
            "relayed": _relaying.get(),
        }
        emit(ReceivedMessageEvent(agent, data))


_relaying: contextvars.ContextVar[bool] = contextvars.ContextVar("parley_relaying", default=False)


@contextmanager
def relaying() -> Iterator[None]:
    """Within the block, the messages received are a group chat manager's copies of a
    member's message (``received_message`` says ``relayed``); nothing is set while nobody
    listens."""
    if not listening():
        yield
        return
    token = _relaying.set(True)
    try:
        yield
    finally:
        _relaying.reset(token)


class TokenDelta(TypedDict):
    text: str  # the new text ("" with reset)
    reset: bool  # the stream failed part-way: the text it gave so far is not the reply
    echoed: bool  # printed to the IOStream too (False in a silent chat)


class TokenDeltaEvent(Event):
    """``source``: None; the ``llm_call`` step current where it is made says whose reply and
    which request."""

    __slots__ = ()
    name: ClassVar[Literal["token_delta"]] = "token_delta"
    data: TokenDelta


def token_delta(text: str, echoed: bool, reset: bool = False) -> None:
    """A piece of a streamed reply's text arrived (``reset``: the stream broke; what came
    before is void)."""
    if listening():
        emit(TokenDeltaEvent(None, {"text": text, "reset": reset, "echoed": echoed}))


class HumanAsk(NamedTuple):
    """An agent asking its human: its ``prompt``, the agent whose message it answers, and
    what waits for approval, if that is what it asks: a tool call (a ``PendingToolCall``) or
    code blocks (``CodeBlock`` s, in the order they would run)."""

    agent: Any
    prompt: str
    sender: Any
    tool_call: Any
    code_blocks: Sequence[Any] | None = None


_asking: contextvars.ContextVar[HumanAsk | None] = contextvars.ContextVar(
    "parley_asking_human", default=None
)


@contextmanager
def asking_human(
    agent: Any,
    prompt: str,
    sender: Any,
    tool_call: Any = None,
    code_blocks: Sequence[Any] | None = None,
) -> Iterator[None]:
    """Within the block ``agent`` asks its human (:func:`current_ask`); nothing is set while
    nobody listens."""
    if not listening():
        yield
        return
    token = _asking.set(HumanAsk(agent, prompt, sender, tool_call, code_blocks))
    try:
        yield
    finally:
        _asking.reset(token)


def current_ask() -> HumanAsk | None:
    """The ask of the human running in this context (see :func:`asking_human`), if any."""
    return _asking.get()


class AgentCreated(TypedDict):
    init_args: dict[str, Any]  # the constructor's arguments


class AgentCreatedEvent(Event):
    """``source``: the new agent."""

    __slots__ = ()
    name: ClassVar[Literal["agent_created"]] = "agent_created"
    data: AgentCreated


def agent_created(agent: Any, arguments: Mapping[str, Any]) -> None:
    """``arguments``: the constructor's ``locals()``, ``self`` and ``__class__`` left out."""
    if listening():
        init_args = {k: v for k, v in arguments.items() if k not in ("self", "__class__")}
        emit(AgentCreatedEvent(agent, {"init_args": init_args}))


class WrapperCreated(TypedDict):
    init_args: dict[str, Any]  # config_list and the other keys of the wrapper's config


class WrapperCreatedEvent(Event):
    """``source``: the new ``OpenAIWrapper``."""

    __slots__ = ()
    name: ClassVar[Literal["wrapper_created"]] = "wrapper_created"
    data: WrapperCreated


def wrapper_created(wrapper: Any, config_list: Any, base_config: Mapping[str, Any]) -> None:
    if listening():
        init_args = {"config_list": config_list, **base_config}
        emit(WrapperCreatedEvent(wrapper, {"init_args": init_args}))


class ClientCreated(TypedDict):
    wrapper: Any  # the OpenAIWrapper the client serves
    init_args: dict[str, Any]  # its config entry


class ClientCreatedEvent(Event):
    """``source``: the new model client."""

    __slots__ = ()
    name: ClassVar[Literal["client_created"]] = "client_created"
    data: ClientCreated


def client_created(client: Any, wrapper: Any, entry: dict[str, Any]) -> None:
    if listening():
        emit(ClientCreatedEvent(client, {"wrapper": wrapper, "init_args": entry}))
