"""A run's typed events (AG2's ``autogen.events``): what ``agent.run(...)`` yields.

Each event is a pydantic model with a stable ``type`` name and a ``content`` payload (AG2's
layout: ``event.type == "text"``, ``event.content.sender``). Every event is JSON-serialisable
(``event.model_dump(mode="json")``) and :func:`parse_event` reads that JSON back into the
right class. The kinds, in the order a chat makes them::

    run_start            the run began                              agent_events
    chat_start           a chat began (nested ones too)             agent_events
    text / tool_call / function_call        a message sent          agent_events
    stream               a piece of a reply's text while it streams client_events
    usage                a model call's tokens and cost             client_events
    execute_function / executed_function    a tool runs / ran      agent_events
    tool_response / function_response       its results, sent back agent_events
    execute_code_block / executed_code_block  code blocks run / ran agent_events
    group_chat_run_chat  a group chat's next speaker                agent_events
    input_request / input_response  the human is asked / answered   input_events
    termination          why a chat stopped                         agent_events
    chat_end             a chat ended, with summary and cost        agent_events
    run_completion       the run finished (summary, history, cost)  agent_events
    error                the run failed                             agent_events

The events are made from parley's reports (:mod:`parley._core.reports`), the one record of
what happens, by a run's listener (``parley.events._from_reports``); nothing is made while no run
listens.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from .agent_events import (
    ChatEndEvent,
    ChatStartEvent,
    ErrorEvent,
    ExecuteCodeBlockEvent,
    ExecutedCodeBlockEvent,
    ExecutedFunctionEvent,
    ExecuteFunctionEvent,
    FunctionCall,
    FunctionCallEvent,
    FunctionResponseEvent,
    GroupChatRunChatEvent,
    RunCompletionEvent,
    RunStartEvent,
    TerminationEvent,
    TextEvent,
    ToolCall,
    ToolCallEvent,
    ToolResponse,
    ToolResponseEvent,
)
from .base_event import BaseEvent, EventContent
from .client_events import StreamEvent, UsageEvent
from .input_events import (
    CodeBlockApproval,
    InputRequestEvent,
    InputResponseEvent,
    ToolApproval,
)

__all__ = [
    "EVENT_CLASSES",
    "BaseEvent",
    "ChatEndEvent",
    "ChatStartEvent",
    "CodeBlockApproval",
    "ErrorEvent",
    "Event",
    "EventContent",
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
    "StreamEvent",
    "TerminationEvent",
    "TextEvent",
    "ToolApproval",
    "ToolCall",
    "ToolCallEvent",
    "ToolResponse",
    "ToolResponseEvent",
    "UsageEvent",
    "parse_event",
]

Event = Annotated[
    RunStartEvent
    | ChatStartEvent
    | TextEvent
    | ToolCallEvent
    | FunctionCallEvent
    | StreamEvent
    | UsageEvent
    | ExecuteFunctionEvent
    | ExecutedFunctionEvent
    | ToolResponseEvent
    | FunctionResponseEvent
    | ExecuteCodeBlockEvent
    | ExecutedCodeBlockEvent
    | GroupChatRunChatEvent
    | InputRequestEvent
    | InputResponseEvent
    | TerminationEvent
    | ChatEndEvent
    | RunCompletionEvent
    | ErrorEvent,
    Field(discriminator="type"),
]
"""Any event: the union, told apart by ``type`` (for pydantic fields and ``TypeAdapter``)."""

EVENT_CLASSES: dict[str, type[BaseEvent]] = {
    cls.model_fields["type"].default: cls
    for cls in (
        RunStartEvent,
        ChatStartEvent,
        TextEvent,
        ToolCallEvent,
        FunctionCallEvent,
        StreamEvent,
        UsageEvent,
        ExecuteFunctionEvent,
        ExecutedFunctionEvent,
        ToolResponseEvent,
        FunctionResponseEvent,
        ExecuteCodeBlockEvent,
        ExecutedCodeBlockEvent,
        GroupChatRunChatEvent,
        InputRequestEvent,
        InputResponseEvent,
        TerminationEvent,
        ChatEndEvent,
        RunCompletionEvent,
        ErrorEvent,
    )
}
"""Each event class by its ``type`` name."""

_adapter: TypeAdapter[Any] | None = None


def parse_event(data: Any) -> BaseEvent:
    """The event that ``data`` (a dict from ``event.model_dump(mode="json")``, or its JSON
    text) describes; ``pydantic.ValidationError`` names what does not fit."""
    global _adapter
    if _adapter is None:
        _adapter = TypeAdapter(Event)
    if isinstance(data, (str, bytes)):
        return _adapter.validate_json(data)  # type: ignore[no-any-return]
    return _adapter.validate_python(data)  # type: ignore[no-any-return]
