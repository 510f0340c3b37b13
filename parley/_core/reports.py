"""Every report parley makes, in one place: each kind of step and event, what it carries (a
``TypedDict``: the start attributes, then those its ``end`` adds), and the one function each
report point calls to make it.

Steps nest: ``chat`` > ``turn`` (one agent's ``generate_reply``) > ``reply_func`` (one reply
function) > ``llm_call`` / ``tool_call`` / ``code_execution``; a group chat's manager also runs
``speaker_selection``, and a chat ends with its ``summary``. Events (made in
:mod:`parley._core.report_events`, named here too): ``agent_created``, ``wrapper_created``,
``client_created``, ``received_message``, ``token_delta`` (a piece of a streamed reply's text).
:data:`STEP_ATTRS` lists what each kind of step carries, read from the types below.

Two facts are kept in the context for listeners to read, not reported: :func:`asking_human`
(an agent is asking its human, :func:`current_ask` says who and about what: a tool call
or code waiting for approval, say) and :func:`relaying` (a group chat's manager passing a member's
message on to the others: those copies' ``received_message`` say ``relayed``).

Each function returns :data:`parley._core.events.INERT` (or makes no event) while nobody listens,
before it builds anything: that test is made here and nowhere else, so the report points pay a
function call and no more. Listeners tell the kinds apart with ``isinstance`` (or ``kind``),
which also types ``attrs``. A public event stream is meant to be made from these: they are the
one source of what happened.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypedDict

from .events import INERT, Inert, Step, listening
from .report_events import (
    AgentCreated,
    AgentCreatedEvent,
    ClientCreated,
    ClientCreatedEvent,
    HumanAsk,
    ReceivedMessage,
    ReceivedMessageEvent,
    TokenDelta,
    TokenDeltaEvent,
    WrapperCreated,
    WrapperCreatedEvent,
    agent_created,
    asking_human,
    client_created,
    current_ask,
    name_of,
    received_message,
    relaying,
    token_delta,
    wrapper_created,
)

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


_name = name_of  # the steps below name agents as the events do


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
    if not listening(ReplyFuncStep.kind):  # a turn makes several: only if a listener needs them
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
    # "approved" or "rejected" by the human for an agent whose code_execution_config requires
    # approval (rejected blocks did not run: exit code 1, the rejection as the output); else None.
    approval: str | None


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
    agent: Any,
    languages: list[str],
    code: list[str],
    executor: object = None,
    approval: str | None = None,
) -> CodeExecutionStep | Inert:
    if not listening():
        return INERT
    kind = "legacy" if executor is None else type(executor).__name__
    attrs: CodeExecutionAttrs = {
        "executor": kind,
        "languages": languages,
        "code": "\n\n".join(code),
        "approval": approval,
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
