"""What agents do in a chat, as events (AG2's ``autogen.events.agent_events``): the messages
they send, the functions and code they run, who speaks next in a group chat. The human's input
(:mod:`~parley.events.input_events`) and the run's own events, its chats' ends and its errors
(:mod:`~parley.events.run_events`) are re-exported here, where AG2 keeps them.

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

from pydantic import BaseModel

from .base_event import BaseEvent, ContentClass, EventContent, Printer
from .input_events import InputRequestEvent, InputResponseEvent
from .run_events import (
    ChatEndEvent,
    ChatStartEvent,
    ErrorEvent,
    RunCompletionEvent,
    RunStartEvent,
    TerminationEvent,
)

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
    # "approved" / "rejected" by the human, when the agent's code_execution_config requires
    # approval; rejected blocks do not run (the executed_code_block after says why, not a result)
    approval: str | None = None

    def print(self, f: Printer | None = None) -> None:
        if self.code_block_count == 1:
            what = f"CODE BLOCK (inferred language is {self.language})"
        else:
            what = f"{self.code_block_count} CODE BLOCKS (inferred languages are "
            what += f"[{', '.join(self.languages)}])"
        if self.approval == "rejected":
            _out(f)(f"\n>>>>>>>> NOT EXECUTING {what}: the human rejected it", flush=True)
        else:
            _out(f)(f"\n>>>>>>>> EXECUTING {what}...", flush=True)


class ExecuteCodeBlockEvent(BaseEvent):
    """An agent starts running the code blocks of a message."""

    type: Literal["execute_code_block"] = "execute_code_block"
    content: ExecuteCodeBlock
    content_class: ClassVar[ContentClass] = ExecuteCodeBlock


class ExecutedCodeBlock(EventContent):
    exit_code: int  # 1 for rejected blocks, which did not run
    output: str  # for rejected blocks: the rejection, as the model reads it
    recipient: str
    approval: str | None = None  # as the execute_code_block event's


class ExecutedCodeBlockEvent(BaseEvent):
    """The code blocks ran: their exit code (0: all succeeded) and output; or, with
    ``approval="rejected"``, the human refused them and they did not run."""

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
