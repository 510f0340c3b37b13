"""Checking a message before an agent stores it: refuse what no request can carry, repair what
can be repaired.

A stored message is sent again with every later request of the chat, so one that no request can
carry (content that is not text or content parts, a content part without a ``type``, tool calls
whose arguments are not a JSON string, a ``name`` that is not a str, values nested more than
:data:`MAX_NESTING` levels) is refused with :class:`InvalidMessageError` naming the field, and
nothing is stored; AutoGen stored it and every later turn failed. Lone surrogates (text decoded
with ``surrogateescape``, a model's ``\\ud800`` escape), which no request can encode, are replaced
with U+FFFD and a :class:`MessageRepairedWarning` says where.
"""

from __future__ import annotations

import re
import reprlib
import warnings
from collections.abc import Mapping
from typing import Any, NoReturn, overload

from ..exceptions import InvalidMessageError, MessageRepairedWarning
from ..types import Message

__all__ = ["MAX_NESTING", "STORED_KEYS", "check_message", "fail", "fill_template", "short_repr"]

STORED_KEYS = (
    "content",
    "function_call",
    "tool_calls",
    "tool_responses",
    "tool_call_id",
    "name",
    "context",
    "parley_reasoning",
)
"""The keys a stored message keeps (``parley_reasoning``: a Responses API model's reasoning
items, for its next turn)."""

# Deeper than any real message or tool arguments; far below what json, repr and pydantic
# survive (they recurse once per level, on top of the chat's own stack).
MAX_NESTING = 100
_SURROGATE = re.compile("[\ud800-\udfff]")
_short = reprlib.Repr()
_short.maxstring = _short.maxother = 80


def _is_template(content: Any) -> bool:
    from ..oai._templating import is_jinja_template

    return callable(content) or is_jinja_template(content)


def fill_template(message: Mapping[str, Any]) -> Any:
    """The content of ``message``; a callable or jinja2 template is filled from its context
    (a str template is left to the client, which formats it only when allowed)."""
    content = message.get("content")
    context = message.get("context")
    if not context or content is None or isinstance(content, (str, list)):
        return content
    from ..oai._templating import instantiate

    return instantiate(content, context)


def _describe(value: Any) -> str:
    return f"{type(value).__name__} {_short.repr(value)}"


class _Checker:
    """One message's check: refuses what no request can carry, repairs lone surrogates.

    Values are copied only where a string is repaired; the caller's message is never modified.
    """

    __slots__ = ("own_name", "partner_name", "repaired", "sending")

    def __init__(self, sending: bool, own_name: str, partner_name: str) -> None:
        self.sending = sending
        self.own_name = own_name
        self.partner_name = partner_name
        self.repaired: list[str] = []

    def fail(self, problem: str) -> NoReturn:
        fail(self.sending, self.own_name, self.partner_name, problem)

    def text(self, value: str, where: str) -> str:
        if value.isascii() or _SURROGATE.search(value) is None:
            return value
        self.repaired.append(where)
        return _SURROGATE.sub("\ufffd", value)

    def repair(self, value: Any, where: str, depth: int = 0) -> Any:
        """``value`` with its strings repaired (a copy only if one changed), nesting bounded."""
        if isinstance(value, str):
            return self.text(value, where)
        if depth >= MAX_NESTING and isinstance(value, (Mapping, list, tuple)):
            self.fail(f"{where} is nested more than {MAX_NESTING} levels deep")
        if isinstance(value, Mapping):
            copied: dict[Any, Any] | None = None
            for key, item in value.items():
                new = self.repair(item, f"{where}.{key}", depth + 1)
                if new is not item:
                    copied = dict(value) if copied is None else copied
                    copied[key] = new
            return value if copied is None else copied
        if isinstance(value, (list, tuple)):
            items: list[Any] | None = None
            for i, item in enumerate(value):
                new = self.repair(item, f"{where}[{i}]", depth + 1)
                if new is not item:
                    items = list(value) if items is None else items
                    items[i] = new
            if items is None:
                return value
            return tuple(items) if isinstance(value, tuple) else items
        return value

    def string(self, value: Any, where: str, hint: str = "") -> None:
        if not isinstance(value, str):
            self.fail(f"{where} must be a str{hint}, got {_describe(value)}")

    def content(self, content: Any, where: str) -> None:
        if content is None or isinstance(content, str):
            return
        if not isinstance(content, list):
            self.fail(
                f"{where} must be a str, a list of content parts or None, got {_describe(content)}"
            )
        for i, part in enumerate(content):
            if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
                self.fail(
                    f"{where}[{i}] must be a content part, a dict with a str 'type' such as "
                    f"{{'type': 'text', 'text': '...'}}, got {_describe(part)}"
                )
            if part["type"] == "text":
                self.string(part.get("text"), f"{where}[{i}]['text'] of a text part")

    def shapes(self, message: Mapping[str, Any]) -> None:
        content = message.get("content")
        # A template (a format string or callable filled from ``context``) is filled from the message's context when it is printed and
        # sent; without a context nothing could ever turn it into text.
        if not message.get("context") or not _is_template(content):
            self.content(content, "content")
        for key in ("name", "tool_call_id", "override_role"):
            if message.get(key) is not None:
                self.string(message[key], key)
        function_call = message.get("function_call")
        if function_call is not None:
            self.function(function_call, "function_call")
        tool_calls = message.get("tool_calls")
        if tool_calls is not None:
            if not isinstance(tool_calls, list):
                self.fail(f"tool_calls must be a list of tool calls, got {_describe(tool_calls)}")
            for i, call in enumerate(tool_calls):
                if not isinstance(call, Mapping):
                    self.fail(f"tool_calls[{i}] must be a dict, got {_describe(call)}")
                for key in ("id", "type"):
                    if call.get(key) is not None:
                        self.string(call[key], f"tool_calls[{i}].{key}")
                self.function(call.get("function"), f"tool_calls[{i}].function")
        responses = message.get("tool_responses")
        if responses is not None:
            if not isinstance(responses, list):
                self.fail(f"tool_responses must be a list, got {_describe(responses)}")
            for i, response in enumerate(responses):
                where = f"tool_responses[{i}]"
                if not isinstance(response, Mapping):
                    self.fail(f"{where} must be a dict, got {_describe(response)}")
                content = response.get("content")
                if content is None:
                    self.fail(f"{where}.content must be a str or a list of content parts")
                self.content(content, f"{where}.content")
                for key in ("tool_call_id", "role", "name"):
                    if response.get(key) is not None:
                        self.string(response[key], f"{where}.{key}")

    def function(self, function: Any, where: str) -> None:
        if not isinstance(function, Mapping):
            self.fail(
                f"{where} must be a dict with 'name' and 'arguments', got {_describe(function)}"
            )
        self.string(function.get("name"), f"{where}.name")
        self.string(
            function.get("arguments"),
            f"{where}.arguments",
            " (the arguments as JSON text: json.dumps them)",
        )

    def message(self, message: Any) -> Any:
        if isinstance(message, str):
            return self.text(message, "content")
        if not isinstance(message, Mapping):
            if callable(getattr(message, "model_dump", None)):
                # An openai message object: dict() of it would keep its tool calls as objects.
                message = message.model_dump(exclude_none=True)
            else:
                try:
                    message = dict(message)
                except (TypeError, ValueError):
                    self.fail(f"a message must be a str or a dict, got {_describe(message)}")
        self.shapes(message)
        repaired: dict[str, Any] | None = None
        for key in STORED_KEYS:
            value = message.get(key)
            # The context fills a template once and is popped at the first request: its values
            # are the user's own objects, not message text.
            if value is None or key == "context":
                continue
            new = self.repair(value, key)
            if new is not value:
                repaired = dict(message) if repaired is None else repaired
                repaired[key] = new
        return message if repaired is None else repaired


@overload
def check_message(
    message: str, *, sending: bool, own_name: str, partner_name: str, quiet: bool = False
) -> str: ...


@overload
def check_message(
    message: Mapping[str, Any],
    *,
    sending: bool,
    own_name: str,
    partner_name: str,
    quiet: bool = False,
) -> Message: ...


@overload
def check_message(
    message: object, *, sending: bool, own_name: str, partner_name: str, quiet: bool = False
) -> str | Message: ...


def check_message(
    message: object, *, sending: bool, own_name: str, partner_name: str, quiet: bool = False
) -> str | Message:
    """``message`` if it can be stored as it is, or a copy with its lone surrogates replaced
    (with a :class:`MessageRepairedWarning`, unless ``quiet``: for a message already warned
    about); :class:`InvalidMessageError` if no model request could carry it. A message that is
    neither a str nor a dict comes back as a dict.

    Where a message enters (``send``, a group chat's transcript, a resumed chat's history) this
    is its one check; from there on it is a :class:`~parley.types.Message` (the keys an agent
    reads have the types that type gives them)."""
    checker = _Checker(sending, own_name, partner_name)
    checked: str | Message = checker.message(message)
    if checker.repaired and not quiet:
        warnings.warn(
            MessageRepairedWarning(
                f"{_what(sending, own_name, partner_name)} held lone surrogates, which no model request can carry; "
                f"they were replaced with U+FFFD in {', '.join(checker.repaired)}"
            ),
            stacklevel=2,
        )
    return checked


def fail(sending: bool, own_name: str, partner_name: str, problem: str) -> NoReturn:
    """Raise :class:`InvalidMessageError` for the message ``own_name`` sends or receives."""
    raise InvalidMessageError(f"cannot store {_what(sending, own_name, partner_name)}: {problem}")


def _what(sending: bool, own_name: str, partner_name: str) -> str:
    verb = "sends to" if sending else "receives from"
    return f"the message {own_name!r} {verb} {partner_name!r}"


def short_repr(value: Any) -> str:
    """``repr(value)``, cut short and safe on deeply nested values."""
    return _short.repr(value)
