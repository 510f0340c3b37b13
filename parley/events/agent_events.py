"""What agents do in a chat, as events (AG2's ``autogen.events.agent_events``): the messages
they send, the functions and code they run, who speaks next in a group chat, the human's
input, the end of a chat and the errors.

Where AG2 has the event, the ``type`` and the fields have AG2's names (``text``,
``tool_call``, ``tool_response``, ``execute_function``, ``executed_function``,
``execute_code_block``, ``group_chat_run_chat``, ``input_request``, ``termination``,
``error``, ``run_completion``); the others are parley's. Each payload adds ``chat_id``
(:class:`~parley.events.base_event.EventContent`), and a message's payload the
``message_id`` that the ``stream`` deltas of its text carry.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, PrivateAttr

from .base_event import BaseEvent, ContentClass, EventContent, Printer
from .input_events import InputRequestEvent, InputResponseEvent

__all__ = [
    "ChatEndEvent",
    "ChatStartEvent",
    "ErrorEvent",
    "ExecuteCodeBlockEvent",
    "ExecuteFunctionEvent",
    "ExecutedCodeBlockEvent",
    "ExecutedFunctionEvent",
    "FunctionCall",
    "FunctionCallEvent",
    "FunctionResponseEvent",
    "GroupChatRunChatEvent",
    "InputRequestEvent",
    "InputResponseEvent",
    "RunCompletionEvent",
    "RunStartEvent",
    "TerminationEvent",
    "TextEvent",
    "ToolCall",
    "ToolCallEvent",
    "ToolResponse",
    "ToolResponseEvent",
]

_RULE = "-" * 80


def _out(f: Printer | None) -> Printer:
    return f or print


def _text(content: Any) -> str:
    """A message's content as console text (a multimodal list: its text parts, images named)."""
    if content is None:
        return ""
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, dict) and item.get("type") == "text":
                parts.append(str(item.get("text", "")))
            elif isinstance(item, dict) and item.get("type") == "image_url":
                parts.append("<image>")
            else:
                parts.append(str(item))
        return " ".join(parts)
    return str(content)


# -- the run and its chats ----------------------------------------------------------------


class RunStart(EventContent):
    run_id: str
    agents: list[str]  # the agents the run was started with


class RunStartEvent(BaseEvent):
    """A run began (before its first chat)."""

    type: Literal["run_start"] = "run_start"
    content: RunStart
    content_class: ClassVar[ContentClass] = RunStart


class ChatStart(EventContent):
    parent_chat_id: str | None = None  # the chat this one runs inside (a nested chat)
    sender: str
    recipient: str | None
    message: str | dict[str, Any] | None = None  # the first message (None: made by a callable)
    max_turns: int | None = None

    def print(self, f: Printer | None = None) -> None:
        if self.parent_chat_id is not None:
            out = _out(f)
            out("\n" + "*" * 80, flush=True, sep="")
            out(f"Starting a new chat: {self.sender} -> {self.recipient}", flush=True)
            out("*" * 80, flush=True, sep="")


class ChatStartEvent(BaseEvent):
    """A chat began (the run's own, or a nested or queued one: see ``parent_chat_id``)."""

    type: Literal["chat_start"] = "chat_start"
    content: ChatStart
    content_class: ClassVar[ContentClass] = ChatStart


class ChatEnd(EventContent):
    termination_reason: str | None = None
    summary: Any = None
    cost: dict[str, Any] | None = None  # AutoGen's ChatResult.cost


class ChatEndEvent(BaseEvent):
    """A chat ended, with its summary and cost."""

    type: Literal["chat_end"] = "chat_end"
    content: ChatEnd
    content_class: ClassVar[ContentClass] = ChatEnd


class Termination(EventContent):
    termination_reason: str

    def print(self, f: Printer | None = None) -> None:
        _out(f)(f"\n>>>>>>>> TERMINATING RUN ({self.uuid}): {self.termination_reason}", flush=True)


class TerminationEvent(BaseEvent):
    """Why a chat stopped (``is_termination_msg``, ``max_turns``, ``human_exit``, a budget...)."""

    type: Literal["termination"] = "termination"
    content: Termination
    content_class: ClassVar[ContentClass] = Termination


class RunCompletion(EventContent):
    summary: Any = None
    history: list[dict[str, Any]]
    cost: dict[str, Any] | None = None
    last_speaker: str | None = None
    termination_reason: str | None = None


class RunCompletionEvent(BaseEvent):
    """The run finished: the last event of a run that did not fail."""

    type: Literal["run_completion"] = "run_completion"
    content: RunCompletion
    content_class: ClassVar[ContentClass] = RunCompletion


class Error(EventContent):
    error: str  # the exception's message
    error_type: str  # its class name

    _exception: BaseException | None = PrivateAttr(default=None)

    @property
    def exception(self) -> BaseException | None:
        """The exception itself, in the process that ran the chat (None once parsed)."""
        return self._exception

    def set_exception(self, error: BaseException) -> None:
        """Keep the exception (the run that failed sets it, to raise it to its consumer)."""
        self._exception = error

    def print(self, f: Printer | None = None) -> None:
        _out(f)(f"\n>>>>>>>> ERROR: {self.error_type}: {self.error}", flush=True)


class ErrorEvent(BaseEvent):
    """The run failed: the last event of a run that did not complete. The run's iterator
    raises the exception itself after yielding this."""

    type: Literal["error"] = "error"
    content: Error
    content_class: ClassVar[ContentClass] = Error


# -- messages -----------------------------------------------------------------------------


class _Received(EventContent):
    sender: str
    recipient: str
    message_id: str | None = None  # the id the stream deltas of this message carry

    def _head(self, f: Printer) -> None:
        f(f"{self.sender} (to {self.recipient}):\n", flush=True)


class Text(_Received):
    content: str | list[dict[str, Any]] | None = None

    def print(self, f: Printer | None = None) -> None:
        out = _out(f)
        self._head(out)
        if self.content is not None:
            out(_text(self.content), flush=True)
        out("\n" + _RULE, flush=True, sep="")


class TextEvent(BaseEvent):
    """A message of text (or text and images) from one agent to another."""

    type: Literal["text"] = "text"
    content: Text
    content_class: ClassVar[ContentClass] = Text


class FunctionCall(BaseModel):
    name: str | None = None
    arguments: str | None = None  # the JSON text the model wrote

    def print(self, f: Printer, head: str) -> None:
        title = f"***** {head}: {self.name or '(no function name)'} *****"
        f(title, flush=True)
        f("Arguments: \n", self.arguments or "(no arguments)", flush=True, sep="")
        f("*" * len(title), flush=True)


class ToolCall(BaseModel):
    id: str | None = None
    type: str = "function"
    function: FunctionCall


class ToolCallMessage(_Received):
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[ToolCall]

    def print(self, f: Printer | None = None) -> None:
        out = _out(f)
        self._head(out)
        if self.content:
            out(_text(self.content), flush=True)
        for call in self.tool_calls:
            call.function.print(out, f"Suggested tool call ({call.id or 'no id'})")
        out("\n" + _RULE, flush=True, sep="")


class ToolCallEvent(BaseEvent):
    """A model's reply asking for tool calls."""

    type: Literal["tool_call"] = "tool_call"
    content: ToolCallMessage
    content_class: ClassVar[ContentClass] = ToolCallMessage


class FunctionCallMessage(_Received):
    content: str | list[dict[str, Any]] | None = None
    function_call: FunctionCall

    def print(self, f: Printer | None = None) -> None:
        out = _out(f)
        self._head(out)
        if self.content:
            out(_text(self.content), flush=True)
        self.function_call.print(out, "Suggested function call")
        out("\n" + _RULE, flush=True, sep="")


class FunctionCallEvent(BaseEvent):
    """A model's reply asking for a (legacy) function call."""

    type: Literal["function_call"] = "function_call"
    content: FunctionCallMessage
    content_class: ClassVar[ContentClass] = FunctionCallMessage


class ToolResponse(BaseModel):
    tool_call_id: str | None = None
    role: str = "tool"
    content: str | list[dict[str, Any]] | None = None


def _response_block(f: Printer, role: str, ident: str | None, content: Any) -> None:
    title = f"***** Response from calling {role} ({ident or 'no id'}) *****"
    f(title, flush=True)
    f(_text(content), flush=True)
    f("*" * len(title), flush=True)


class ToolResponseMessage(_Received):
    content: str | list[dict[str, Any]] | None = None
    tool_responses: list[ToolResponse]

    def print(self, f: Printer | None = None) -> None:
        out = _out(f)
        self._head(out)
        for r in self.tool_responses:
            _response_block(out, "tool", r.tool_call_id, r.content)
        out("\n" + _RULE, flush=True, sep="")


class ToolResponseEvent(BaseEvent):
    """The results of tool calls, sent back to the agent that asked."""

    type: Literal["tool_response"] = "tool_response"
    content: ToolResponseMessage
    content_class: ClassVar[ContentClass] = ToolResponseMessage


class FunctionResponseMessage(_Received):
    name: str | None = None
    content: str | list[dict[str, Any]] | None = None

    def print(self, f: Printer | None = None) -> None:
        out = _out(f)
        self._head(out)
        _response_block(out, "function", self.name, self.content)
        out("\n" + _RULE, flush=True, sep="")


class FunctionResponseEvent(BaseEvent):
    """The result of a (legacy) function call, sent back to the agent that asked."""

    type: Literal["function_response"] = "function_response"
    content: FunctionResponseMessage
    content_class: ClassVar[ContentClass] = FunctionResponseMessage


# -- functions and code, run --------------------------------------------------------------


class ExecuteFunction(EventContent):
    func_name: str
    call_id: str | None = None
    arguments: dict[str, Any]
    recipient: str  # the agent running it (AG2's name for it)
    approval: str | None = None  # "approved" / "rejected" by the human, for requires_approval

    def print(self, f: Printer | None = None) -> None:
        _out(f)(
            f"\n>>>>>>>> EXECUTING FUNCTION {self.func_name}...\nCall ID: {self.call_id}\n"
            f"Input arguments: {json.dumps(self.arguments, default=str)}",
            flush=True,
        )


class ExecuteFunctionEvent(BaseEvent):
    """An agent starts running a function or tool the model asked for."""

    type: Literal["execute_function"] = "execute_function"
    content: ExecuteFunction
    content_class: ClassVar[ContentClass] = ExecuteFunction


class ExecutedFunction(ExecuteFunction):
    content: Any = None  # the result the model reads
    is_exec_success: bool = True

    def print(self, f: Printer | None = None) -> None:
        _out(f)(
            f"\n>>>>>>>> EXECUTED FUNCTION {self.func_name}...\nCall ID: {self.call_id}\n"
            f"Input arguments: {json.dumps(self.arguments, default=str)}\nOutput:\n"
            f"{_text(self.content)}",
            flush=True,
        )


class ExecutedFunctionEvent(BaseEvent):
    """A function or tool finished (``is_exec_success`` False: its error is the result)."""

    type: Literal["executed_function"] = "executed_function"
    content: ExecutedFunction
    content_class: ClassVar[ContentClass] = ExecutedFunction


class ExecuteCodeBlock(EventContent):
    code: str  # the blocks' code, joined by blank lines
    language: str  # the first block's language
    languages: list[str]  # every block's
    code_block_count: int
    recipient: str  # the agent running it
    executor: str  # the executor's class name, or "legacy"

    def print(self, f: Printer | None = None) -> None:
        if self.code_block_count == 1:
            what = f"CODE BLOCK (inferred language is {self.language})"
        else:
            what = f"{self.code_block_count} CODE BLOCKS (inferred languages are "
            what += f"[{', '.join(self.languages)}])"
        _out(f)(f"\n>>>>>>>> EXECUTING {what}...", flush=True)


class ExecuteCodeBlockEvent(BaseEvent):
    """An agent starts running the code blocks of a message."""

    type: Literal["execute_code_block"] = "execute_code_block"
    content: ExecuteCodeBlock
    content_class: ClassVar[ContentClass] = ExecuteCodeBlock


class ExecutedCodeBlock(EventContent):
    exit_code: int
    output: str
    recipient: str


class ExecutedCodeBlockEvent(BaseEvent):
    """The code blocks ran: their exit code (0: all succeeded) and output."""

    type: Literal["executed_code_block"] = "executed_code_block"
    content: ExecutedCodeBlock
    content_class: ClassVar[ContentClass] = ExecutedCodeBlock


# -- group chats --------------------------------------------------------------------------


class GroupChatRunChat(EventContent):
    speaker: str
    manager: str
    last_speaker: str | None = None

    def print(self, f: Printer | None = None) -> None:
        _out(f)(f"\nNext speaker: {self.speaker}\n", flush=True)


class GroupChatRunChatEvent(BaseEvent):
    """A group chat's manager picked the next speaker."""

    type: Literal["group_chat_run_chat"] = "group_chat_run_chat"
    content: GroupChatRunChat
    content_class: ClassVar[ContentClass] = GroupChatRunChat
