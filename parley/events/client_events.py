"""What the model client does during a run, as events (AG2's ``autogen.events.client_events``):
the text of a reply while it streams, and what each model call cost."""

from __future__ import annotations

from typing import ClassVar, Literal

from .base_event import BaseEvent, ContentClass, EventContent, Printer

__all__ = ["StreamEvent", "UsageEvent"]


class Stream(EventContent):
    content: str  # the new text
    agent: str | None = None  # the agent whose reply streams
    message_id: str | None = None  # the message the text belongs to (its TextEvent's message_id)
    # True: the stream failed part-way and is tried again; drop what came for this message_id.
    reset: bool = False

    def print(self, f: Printer | None = None) -> None:
        (f or print)(self.content, end="", flush=True)


class StreamEvent(BaseEvent):
    """A piece of a reply's text while the model streams it (``llm_config`` ``stream=True``);
    the pieces of one ``message_id`` joined are the text of the message that follows."""

    type: Literal["stream"] = "stream"
    content: Stream
    content_class: ClassVar[ContentClass] = Stream


class Usage(EventContent):
    agent: str | None = None  # the agent charged
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost: float = 0.0  # this call's, in dollars
    cached: bool = False  # answered from the cache (no cost)
    total_cost: float = 0.0  # the run's so far


class UsageEvent(BaseEvent):
    """A model call finished: its tokens and cost, and the run's cost so far."""

    type: Literal["usage"] = "usage"
    content: Usage
    content_class: ClassVar[ContentClass] = Usage
