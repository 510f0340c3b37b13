"""The shape every public event shares (AG2's ``autogen.events.base_event``).

An event is a small pydantic model of two fields: ``type``, a stable name such as ``"text"``
or ``"input_request"``, and ``content``, the payload model of that kind (which carries a
``uuid`` and, for what happens inside a chat, the ``chat_id`` of that chat). This is AG2's
layout, so code written for AG2 that reads ``event.type`` and ``event.content.sender`` reads
parley's events unchanged, and the JSON of an event (``event.model_dump(mode="json")``) has the
same outline.

An event can also be made from its payload's fields directly,
``TextEvent(sender="a", recipient="b", content="hi")``, as AG2 allows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar
from uuid import UUID, uuid4

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["BaseEvent", "ContentClass", "EventContent", "Printer"]

Printer = Callable[..., Any]
"""What an event's ``print`` writes with: builtin ``print``'s signature."""


class EventContent(BaseModel):
    """The payload of an event: its own ``uuid``, the ``chat_id`` of the chat it happened in
    (``ChatResult.run_id``; None for what belongs to the whole run), and the fields of its
    kind."""

    model_config = ConfigDict(arbitrary_types_allowed=False)

    uuid: UUID = Field(default_factory=uuid4)
    chat_id: str | None = None

    def print(self, f: Printer | None = None) -> None:
        """Write this event the way parley's console shows it (nothing, for most kinds)."""


ContentClass = type[EventContent]
"""A payload class (named once here: inside an event class, ``type`` is the field's name)."""


class BaseEvent(BaseModel):
    """One event of a run: ``type`` names its kind, ``content`` holds its data."""

    type: str
    content: EventContent

    #: The payload class of this kind (set by each subclass).
    content_class: ClassVar[ContentClass] = EventContent

    @model_validator(mode="before")
    @classmethod
    def _wrap_flat_fields(cls, data: Any) -> Any:
        # AG2 builds events from their payload's fields; a dict that is already the
        # {type, content: payload} layout passes through.
        if not isinstance(data, Mapping):
            return data
        content = data.get("content")
        wrapped = set(data) <= {"type", "content"} and isinstance(content, (Mapping, EventContent))
        if wrapped:
            return data
        fields = {k: v for k, v in data.items() if k != "type"}
        out: dict[str, Any] = {"content": fields}
        if "type" in data:
            out["type"] = data["type"]
        return out

    def print(self, f: Printer | None = None) -> None:
        """Write this event as parley's console shows it (``f``: a ``print``-like function)."""
        self.content.print(f)

    @classmethod
    def build(cls, **fields: Any) -> Any:
        """Make the event from trusted values without validating them again (parley's own
        events, made from its reports: the values are already of the declared types).

        As ``model_construct``, minus its per-field default lookups: a run makes an event
        per message and per streamed chunk, and this is most of what one costs."""
        content = _blank(cls.content_class, fields)
        event = _blank(cls, {"content": content})
        return event


# Per class: its fields in order with their plain defaults (_FACTORY for a default_factory),
# and its private attributes' defaults.
_FACTORY = object()
_layouts: dict[type[BaseModel], tuple[dict[str, Any], dict[str, Any] | None]] = {}


def _layout(cls: type[BaseModel]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    layout = _layouts.get(cls)
    if layout is None:
        defaults = {
            name: (_FACTORY if info.default_factory is not None else info.default)
            for name, info in cls.model_fields.items()
        }
        private = {name: attr.get_default() for name, attr in cls.__private_attributes__.items()}
        layout = _layouts[cls] = (defaults, private or None)
    return layout


def _blank(cls: type[BaseModel], fields: dict[str, Any]) -> Any:
    defaults, private = _layout(cls)
    values = {}
    for name, default in defaults.items():
        if name in fields:
            values[name] = fields[name]
        elif default is _FACTORY:
            values[name] = cls.model_fields[name].default_factory()  # type: ignore[misc,call-arg]
        else:
            values[name] = default
    instance = cls.__new__(cls)
    object.__setattr__(instance, "__dict__", values)
    object.__setattr__(instance, "__pydantic_fields_set__", set(fields))
    object.__setattr__(instance, "__pydantic_extra__", None)
    object.__setattr__(instance, "__pydantic_private__", dict(private) if private else None)
    return instance
