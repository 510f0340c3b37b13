"""Message payloads for events: any value made JSON, and the event of a received message
(AG2's choice of kind by the message's shape)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from .agent_events import (
    FunctionCall,
    FunctionCallEvent,
    FunctionResponseEvent,
    TextEvent,
    ToolCall,
    ToolCallEvent,
    ToolResponse,
    ToolResponseEvent,
)
from .base_event import BaseEvent

__all__ = ["jsonable", "message_event"]


def jsonable(value: Any) -> Any:
    """``value`` with everything JSON cannot hold made into what it can (models dumped,
    tuples made lists, keys made text, other objects their ``str``)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (dict, Mapping)):  # dict first: no ABC check for the usual case
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return str(value)


def _text(content: Any) -> Any:
    """A message's content for an event: text, a list of parts, or None."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return [
            jsonable(p) if isinstance(p, (dict, Mapping)) else {"text": str(p)} for p in content
        ]
    return str(content)


def _arguments(arguments: Any) -> str | None:
    if arguments is None or isinstance(arguments, str):
        return arguments
    return json.dumps(jsonable(arguments))


def _function(call: Mapping[str, Any]) -> FunctionCall:
    return FunctionCall.model_construct(
        name=call.get("name"), arguments=_arguments(call.get("arguments"))
    )


def message_event(
    message: Any, sender: str, recipient: str, chat_id: str | None, message_id: str | None
) -> BaseEvent:
    """The event of ``message`` received by ``recipient`` from ``sender`` (AG2's choice of
    kind: a function or tool result, a function or tool call, else text)."""
    common = {
        "sender": sender,
        "recipient": recipient,
        "chat_id": chat_id,
        "message_id": message_id,
    }
    if not isinstance(message, (dict, Mapping)):
        return TextEvent.build(content=_text(message), **common)  # type: ignore[no-any-return]
    role = message.get("role")
    content = _text(message.get("content"))
    if role == "function":
        return FunctionResponseEvent.build(name=message.get("name"), content=content, **common)  # type: ignore[no-any-return]
    if role == "tool":
        responses = message.get("tool_responses") or [message]
        return ToolResponseEvent.build(  # type: ignore[no-any-return]
            content=content,
            tool_responses=[
                ToolResponse.model_construct(
                    tool_call_id=r.get("tool_call_id"), role="tool", content=_text(r.get("content"))
                )
                for r in responses
            ],
            **common,
        )
    if message.get("tool_calls"):
        calls = [
            ToolCall.model_construct(
                id=c.get("id"),
                type=str(c.get("type") or "function"),
                function=_function(c.get("function") or {}),
            )
            for c in message["tool_calls"]
        ]
        return ToolCallEvent.build(  # type: ignore[no-any-return]
            content=content, tool_calls=calls, **common
        )
    if message.get("function_call"):
        return FunctionCallEvent.build(  # type: ignore[no-any-return]
            content=content,
            function_call=_function(message["function_call"]),
            **common,
        )
    return TextEvent.build(content=content, **common)  # type: ignore[no-any-return]
