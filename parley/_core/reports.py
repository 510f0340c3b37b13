"""Every report parley makes, in one place: each kind of step and event, what it carries (a
``TypedDict``: the start attributes, then those its ``end`` adds), and the one function each
report point calls to make it.

Steps nest: ``chat`` > ``turn`` (one agent's ``generate_reply``) > ``reply_func`` (one reply
function) > ``llm_call`` / ``tool_call`` / ``code_execution``; a group chat's manager also runs
``speaker_selection``, and a chat ends with its ``summary``. Events: ``agent_created``,
``wrapper_created``, ``client_created``, ``received_message``, ``token_delta`` (a piece of a
streamed reply's text). :data:`STEP_ATTRS` lists what each kind of step carries, read from the
types below.

Two facts are kept in the context for listeners to read, not reported: :func:`asking_human`
(an agent is asking its human, :func:`current_ask` says who and about what: a tool call
waiting for approval, say) and :func:`relaying` (a group chat's manager passing a member's
message on to the others: those copies' ``received_message`` say ``relayed``).

Each function returns :data:`parley._core.events.INERT` (or makes no event) while nobody listens,
before it builds anything: that test is made here and nowhere else, so the report points pay a
function call and no more. Listeners tell the kinds apart with ``isinstance`` (or ``kind``),
which also types ``attrs``. A public event stream is meant to be made from these: they are the
one source of what happened.
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple, TypedDict

from .events import INERT, Event, Inert, Step, emit, listening

if TYPE_CHECKING:
    from ..oai._slot import Attempt
    from ..usage import Usage
    from ..usage._run import ChatRun

__all__ = [
    "STEP_ATTRS",
    "STEP_KINDS",
    "AgentCreated",
    "AgentCreatedEvent",
    "ChatAttrs",
    "ChatStep",
    "ClientCreated",
    "ClientCreatedEvent",
    "CodeExecutionAttrs",
    "CodeExecutionStep",
    "HumanAsk",
    "LLMCallAttrs",
    "LLMCallStep",
    "ReceivedMessage",
    "ReceivedMessageEvent",
    "ReplyFuncAttrs",
    "ReplyFuncStep",
    "SpeakerSelectionAttrs",
    "SpeakerSelectionStep",
    "SummaryAttrs",
    "SummaryStep",
    "TokenDelta",
    "TokenDeltaEvent",
    "ToolCallAttrs",
    "ToolCallStep",
    "TurnAttrs",
    "TurnStep",
    "WrapperCreated",
    "WrapperCreatedEvent",
    "agent_created",
    "asking_human",
    "chat_step",
    "client_created",
    "code_execution_step",
    "current_ask",
    "llm_call_step",
    "received_message",
    "relaying",
    "reply_func_step",
    "speaker_selection_step",
    "summary_step",
    "token_delta",
    "tool_call_step",
    "turn_step",
    "wrapper_created",
]


def _name(agent: Any) -> str | None:
    name = getattr(agent, "name", None)
    return name if name is None or isinstance(name, str) else str(name)


# Each kind of step: ``_XStart`` (set when it starts), ``XAttrs`` (adds what ``end`` sets:
# absent when the step raised), the ``Step`` subclass, and the one function that makes it.

# -- chat: one initiate_chat, from its first message to its summary ---------------------------


class _ChatStart(TypedDict):
    chat_id: str  # ChatResult.run_id
    parent_chat_id: str | None  # the chat this one runs inside (a nested chat)
    sender: str
    recipient: str | None
    message: str | Mapping[str, Any] | None  # the first message (None: a callable makes it)
    max_turns: int | None


class ChatAttrs(_ChatStart, total=False):
    termination_reason: str | None
    summary: Any  # ChatResult.summary
    cost: dict[str, Any] | None  # AutoGen's ChatResult.cost
    usage: Usage  # parley.usage.Usage of the chat, nested chats included


class ChatStep(Step):
    """``name``: "sender -> recipient"; ``agent``: the sender."""

    __slots__ = ()
    kind: ClassVar[Literal["chat"]] = "chat"
    attrs: ChatAttrs

    def end(
        self,
        *,
        termination_reason: str | None,
        summary: Any,
        cost: dict[str, Any] | None,
        usage: Usage,
    ) -> None:
        self.attrs.update(
            {
                "termination_reason": termination_reason,
                "summary": summary,
                "cost": cost,
                "usage": usage,
            }
        )


def chat_step(
    sender: Any, recipient: Any, run: ChatRun, message: Any, max_turns: int | None
) -> ChatStep | Inert:
    if not listening():
        return INERT
    to = _name(recipient)
    parent = run.chat_parent()
    attrs: ChatAttrs = {
        "chat_id": run.id,
        "parent_chat_id": parent.id if parent is not None else None,
        "sender": sender.name,
        "recipient": to,
        "message": None if callable(message) else message,
        "max_turns": max_turns,
    }
    return ChatStep(f"{sender.name} -> {to}", sender, attrs)


# -- turn: one agent's generate_reply ---------------------------------------------------------


class _TurnStart(TypedDict):
    sender: str | None
    messages: int  # how many messages it answers


class TurnAttrs(_TurnStart, total=False):
    reply: Any  # str, a message dict, or None (no reply)


class TurnStep(Step):
    """``name`` and ``agent``: the agent replying."""

    __slots__ = ()
    kind: ClassVar[Literal["turn"]] = "turn"
    attrs: TurnAttrs

    def end(self, reply: Any) -> None:
        self.attrs["reply"] = reply


def turn_step(agent: Any, messages: Sequence[Any], sender: Any) -> TurnStep | Inert:
    if not listening():
        return INERT
    return TurnStep(agent.name, agent, {"sender": _name(sender), "messages": len(messages)})


# -- reply_func: one reply function of a turn's walk ------------------------------------------


class _ReplyFuncStart(TypedDict):
    func: Callable[..., Any]
    sender: str | None


class ReplyFuncAttrs(_ReplyFuncStart, total=False):
    final: bool  # whether it answered (the walk stops)
    reply: Any


class ReplyFuncStep(Step):
    """``name``: the function's; ``agent``: the agent replying."""

    __slots__ = ()
    kind: ClassVar[Literal["reply_func"]] = "reply_func"
    attrs: ReplyFuncAttrs

    def end(self, *, final: bool, reply: Any) -> None:
        self.attrs.update({"final": final, "reply": reply})


def reply_func_step(agent: Any, func: Callable[..., Any], sender: Any) -> ReplyFuncStep | Inert:
    if not listening():
        return INERT
    name = getattr(func, "__name__", type(func).__name__)
    return ReplyFuncStep(name, agent, {"func": func, "sender": _name(sender)})


# -- llm_call: one request to one config's model ----------------------------------------------


class _LLMCallStart(TypedDict):
    request: dict[str, Any]  # the body, no credentials
    wrapper: Any  # the OpenAIWrapper
    client: Any  # the config's model client (None: a custom client not yet registered)
    config_id: int
    model: str
    invocation_id: uuid.UUID
    purpose: str  # what the call is for (parley.usage's purposes: reply, tool, summary...)
    charged_to: str | None  # the agent's name, as parley.usage records it
    replayed: bool  # a durable chat's recorded response, not requested again


class LLMCallAttrs(_LLMCallStart, total=False):
    response: Any  # the client's response (a ChatCompletion for OpenAI's API)
    cost: float
    cached: bool
    usage: dict[str, Any]  # ModelClient.get_usage: prompt/completion/total tokens, model, cost
    response_model: str | None
    finish_reasons: list[str | None]


class LLMCallStep(Step):
    """``name``: the model; ``agent``: the agent that sent the request, else the name of the
    one it is charged to."""

    __slots__ = ()
    kind: ClassVar[Literal["llm_call"]] = "llm_call"
    attrs: LLMCallAttrs

    def end(
        self, *, response: Any, cost: float | None, cached: bool, usage: dict[str, Any]
    ) -> None:
        attrs = self.attrs
        attrs["response"] = response
        attrs["cost"] = cost or 0.0
        attrs["cached"] = cached
        attrs["usage"] = usage
        attrs["response_model"] = getattr(response, "model", None)
        choices = getattr(response, "choices", None) or ()
        attrs["finish_reasons"] = [getattr(c, "finish_reason", None) for c in choices]


def llm_call_step(
    attempt: Attempt,
    config_id: int,
    wrapper: Any,
    charged_to: Callable[[Any], tuple[str | None, str]],
    replayed: bool = False,
) -> LLMCallStep | Inert:
    """``charged_to``: parley.usage's ``charged_to`` (this layer is below usage), called only
    while someone listens."""
    if not listening():
        return INERT
    sent_by = attempt.options.agent
    charged, purpose = charged_to(sent_by)
    model = str(attempt.params.get("model") or "")
    attrs: LLMCallAttrs = {
        "request": attempt.params,
        "wrapper": wrapper,
        "client": attempt.slot.client,
        "config_id": config_id,
        "model": model,
        "invocation_id": uuid.uuid4(),
        "purpose": purpose,
        "charged_to": charged,
        "replayed": replayed,
    }
    return LLMCallStep(model, sent_by or charged, attrs)


# -- tool_call: one function or tool the model asked for --------------------------------------


class _ToolCallStart(TypedDict):
    arguments: dict[str, Any]  # as checked against the function's signature
    call_id: str | None  # the tool call's id (None: a legacy function call)
    # "approved" or "rejected" by the human for a tool registered with requires_approval
    # (a rejected call did not run: it ends failed, the rejection as its result); else None.
    approval: str | None


class ToolCallAttrs(_ToolCallStart, total=False):
    success: bool  # False: the tool failed, and its error went back to the model as the result
    result: Any  # the text the model gets back


class ToolCallStep(Step):
    """``name``: the tool's; ``agent``: the agent running it."""

    __slots__ = ()
    kind: ClassVar[Literal["tool_call"]] = "tool_call"
    attrs: ToolCallAttrs

    def end(self, *, success: bool, result: Any) -> None:
        self.attrs.update({"success": success, "result": result})


def tool_call_step(
    agent: Any,
    name: str,
    arguments: dict[str, Any],
    call_id: str | None,
    approval: str | None = None,
) -> ToolCallStep | Inert:
    if not listening():
        return INERT
    return ToolCallStep(
        name, agent, {"arguments": arguments, "call_id": call_id, "approval": approval}
    )


# -- code_execution: the code blocks of one message, run ---------------------------------------


class _CodeExecutionStart(TypedDict):
    executor: str  # the executor's class name, or "legacy" (AutoGen's execute_code)
    languages: list[str]
    code: str  # the blocks' code, joined by blank lines


class CodeExecutionAttrs(_CodeExecutionStart, total=False):
    exit_code: int  # 0: every block ran and succeeded
    output: str


class CodeExecutionStep(Step):
    """``name``: the executor (as ``executor``); ``agent``: the agent running the code."""

    __slots__ = ()
    kind: ClassVar[Literal["code_execution"]] = "code_execution"
    attrs: CodeExecutionAttrs

    def end(self, *, exit_code: int, output: str) -> None:
        self.attrs.update({"exit_code": exit_code, "output": output})


def code_execution_step(
    agent: Any, languages: list[str], code: list[str], executor: object = None
) -> CodeExecutionStep | Inert:
    if not listening():
        return INERT
    kind = "legacy" if executor is None else type(executor).__name__
    attrs: CodeExecutionAttrs = {
        "executor": kind,
        "languages": languages,
        "code": "\n\n".join(code),
    }
    return CodeExecutionStep(kind, agent, attrs)


# -- speaker_selection: a group chat manager picks who speaks next ----------------------------


class _SpeakerSelectionStart(TypedDict):
    last_speaker: str | None


class SpeakerSelectionAttrs(_SpeakerSelectionStart, total=False):
    speaker: str


class SpeakerSelectionStep(Step):
    """``name`` and ``agent``: the manager."""

    __slots__ = ()
    kind: ClassVar[Literal["speaker_selection"]] = "speaker_selection"
    attrs: SpeakerSelectionAttrs

    def end(self, speaker: str) -> None:
        self.attrs["speaker"] = speaker


def speaker_selection_step(manager: Any, last_speaker: Any) -> SpeakerSelectionStep | Inert:
    if not listening():
        return INERT
    return SpeakerSelectionStep(manager.name, manager, {"last_speaker": _name(last_speaker)})


# -- summary: a finished chat's summary -------------------------------------------------------


class _SummaryStart(TypedDict):
    method: str | Callable[..., Any] | None  # the chat's summary_method


class SummaryAttrs(_SummaryStart, total=False):
    summary: Any


class SummaryStep(Step):
    """``name``: the method (``str(method)``); ``agent``: the chat's recipient."""

    __slots__ = ()
    kind: ClassVar[Literal["summary"]] = "summary"
    attrs: SummaryAttrs

    def end(self, summary: Any) -> None:
        self.attrs["summary"] = summary


def summary_step(recipient: Any, method: str | Callable[..., Any] | None) -> SummaryStep | Inert:
    if not listening():
        return INERT
    return SummaryStep(str(method), recipient, {"method": method})


STEP_KINDS: dict[str, tuple[type[Step], Any]] = {
    cls.kind: (cls, attrs)
    for cls, attrs in (
        (ChatStep, ChatAttrs),
        (TurnStep, TurnAttrs),
        (ReplyFuncStep, ReplyFuncAttrs),
        (LLMCallStep, LLMCallAttrs),
        (ToolCallStep, ToolCallAttrs),
        (CodeExecutionStep, CodeExecutionAttrs),
        (SpeakerSelectionStep, SpeakerSelectionAttrs),
        (SummaryStep, SummaryAttrs),
    )
}
"""Each kind of step: its class and the ``TypedDict`` of its ``attrs``."""


def _keys(attrs: Any, keys: frozenset[str]) -> str:
    return ", ".join(key for key in attrs.__annotations__ if key in keys)


STEP_ATTRS: dict[str, str] = {
    kind: f"start: {_keys(a, a.__required_keys__)}; end: {_keys(a, a.__optional_keys__)}"
    for kind, (_, a) in STEP_KINDS.items()
}
"""The ``attrs`` each kind of step carries at its start and adds at its end (``Step.agent``
is the agent doing the work); read from the types above, see them for what each holds."""


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
            "sender": _name(sender),
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
    the tool call waiting for approval (a ``PendingToolCall``), if that is what it asks."""

    agent: Any
    prompt: str
    sender: Any
    tool_call: Any


_asking: contextvars.ContextVar[HumanAsk | None] = contextvars.ContextVar(
    "parley_asking_human", default=None
)


@contextmanager
def asking_human(agent: Any, prompt: str, sender: Any, tool_call: Any = None) -> Iterator[None]:
    """Within the block ``agent`` asks its human (:func:`current_ask`); nothing is set while
    nobody listens."""
    if not listening():
        yield
        return
    token = _asking.set(HumanAsk(agent, prompt, sender, tool_call))
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
