"""A run asking its consumer for the human's answer, and the answer.

An :class:`InputRequestEvent` is yielded when an agent asks its human during a run (its
``human_input_mode``, or a tool registered with ``requires_approval`` whose call waits for
approval: ``tool_call`` is then set, or an agent whose ``code_execution_config`` has
``"requires_approval": True`` about to run a message's code: ``code_blocks`` is then set). The chat waits until ``event.respond(text)`` (from any
thread) or ``await event.a_respond(text)``; ``event.content.respond(text)`` is the same, and may
be awaited too, as AG2's async processors do.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, PrivateAttr

from ..exceptions import InputRequestError
from .base_event import BaseEvent, ContentClass, EventContent

__all__ = [
    "CodeBlockApproval",
    "InputRequest",
    "InputRequestEvent",
    "InputResponseEvent",
    "ToolApproval",
]


class ToolApproval(BaseModel):
    """The tool call an input request asks the human to approve: answer ``""`` to run it, any
    other text to reject it with that feedback, ``"exit"`` to reject it and end the chat."""

    name: str
    arguments: dict[str, Any]
    call_id: str | None = None


class CodeBlockApproval(BaseModel):
    """One of the code blocks an input request asks the human to approve (all the blocks of a
    message are approved or rejected together, with the same answers as a tool call)."""

    language: str
    code: str


class _Answered:
    """What ``respond`` returns: the answer is already given; awaiting it is a no-op, so
    ``await event.content.respond(text)`` (AG2's async form) works too."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield  # a generator that finishes at once


_ANSWERED = _Answered()


class InputRequest(EventContent):
    prompt: str
    password: bool = False
    agent: str | None = None  # the agent asking its human
    sender: str | None = None  # the agent whose message it answers
    tool_call: ToolApproval | None = None  # set when a tool call waits for approval
    # set when a message's code blocks wait for approval: each, in the order they would run
    code_blocks: list[CodeBlockApproval] | None = None

    _answer: Callable[[str], None] | None = PrivateAttr(default=None)

    def set_responder(self, answer: Callable[[str], None]) -> None:
        """Where ``respond`` delivers (the run that made this request sets it)."""
        self._answer = answer

    def respond(self, response: str) -> _Answered:
        """Give the human's answer: the waiting chat goes on with ``response``."""
        if not isinstance(response, str):
            raise TypeError(f"an input request's answer is text, got {type(response).__name__}")
        if self._answer is None:
            raise InputRequestError(
                "this input request did not come from a running run (it was built or parsed "
                "here), so there is nobody to answer: answer the event the run yields"
            )
        self._answer(response)
        return _ANSWERED

    async def a_respond(self, response: str) -> None:
        """``respond`` from async code."""
        self.respond(response)


class InputRequestEvent(BaseEvent):
    """An agent asks its human; the chat waits for :meth:`respond`."""

    type: Literal["input_request"] = "input_request"
    content: InputRequest
    content_class: ClassVar[ContentClass] = InputRequest

    def respond(self, response: str) -> _Answered:
        """Answer the request (see :meth:`InputRequest.respond`)."""
        return self.content.respond(response)

    async def a_respond(self, response: str) -> None:
        """Answer the request from async code."""
        self.content.respond(response)


class InputResponse(EventContent):
    value: str  # the answer ("" when the request asked for a password: it is not repeated)
    request: str  # the uuid of the request it answers
    agent: str | None = None


class InputResponseEvent(BaseEvent):
    """The human's answer to an input request reached the chat."""

    type: Literal["input_response"] = "input_response"
    content: InputResponse
    content_class: ClassVar[ContentClass] = InputResponse
