"""Typed structured output: an :class:`OutputSchema`, made once from what a user gave as
``response_format``.

Accepted forms (``OutputSchema.of``):

- a pydantic model class (or another type pydantic can validate: a dataclass, a TypedDict):
  replies are parsed into an instance of it;
- a JSON-schema dict (AG2's form), e.g. ``{"type": "object", "properties": {...}}``: replies
  are parsed into plain Python values, checked by the ``jsonschema`` library
  (:mod:`parley.oai._schema_validator`: the draft its ``$schema`` names, 2020-12 by default;
  ``format`` checked only when ``OutputSchema.of(..., check_formats=True)`` asks);
- OpenAI's chat form ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``
  and the Responses API's ``{"type": "json_schema", "name", "schema", "strict"}``;
- an ``OutputSchema``, as it is.

``{"type": "json_object"}`` and ``{"type": "text"}`` are not schemas: ``of`` returns None and
they go to the API as they are, untyped. Anything else is a :class:`ConfigError`.

What provider clients receive is always OpenAI's chat shape (:meth:`OutputSchema.response_format`,
a fresh dict each time: a class never reaches a request, nor the caller's dict). ``strict`` is
OpenAI's strict mode: when the user did not choose, it is on exactly when the schema can be
made strict without changing what it accepts beyond requiring every field (each object gets
``additionalProperties: false`` and all its properties required); a free-form object, or a
keyword strict mode does not take, leaves it off.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..exceptions import ConfigError, StructuredOutputError
from . import _schema_validator

__all__ = ["OutputSchema", "output_schema_of"]

_UNTYPED = ("json_object", "text")
_NAME_OK = re.compile(r"[^A-Za-z0-9_-]")
_DEFAULT_NAME = "response_format"  # AG2's name for a plain schema dict
# Keywords OpenAI's strict mode does not take: a schema using one is sent without strict.
_NOT_STRICT = frozenset(
    {
        "patternProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
        "if",
        "then",
        "else",
        "not",
        "oneOf",
        "prefixItems",
        "contains",
    }
)
_FENCE = re.compile(r"\A```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\Z", re.DOTALL)


class _NotStrict(Exception):
    pass


@dataclass(frozen=True, slots=True, eq=False)
class OutputSchema:
    """A reply's required shape: ``name`` (as OpenAI takes it), the JSON schema, ``strict``
    mode, and ``target``, the Python type replies are parsed into (None: plain JSON values).

    Immutable: the schema is kept as JSON text; :attr:`schema` and :meth:`response_format`
    give fresh dicts."""

    name: str
    strict: bool
    target: Any
    schema_json: str
    _sent_json: str = field(repr=False)
    #: Whether a schema dict's ``format`` keywords are checked (``"email"``, ``"date"``...);
    #: off by default, when ``format`` only annotates, as JSON Schema 2020-12 says.
    check_formats: bool = False

    @classmethod
    def of(
        cls, value: Any, where: str = "response_format", *, check_formats: bool = False
    ) -> OutputSchema | None:
        """The schema ``value`` describes, None for an untyped format (``json_object``,
        ``text``); ConfigError naming ``where`` for anything else, a schema dict that is not a
        valid JSON schema included. ``check_formats`` makes a schema dict's ``format``
        keywords assert (a pydantic model checks its own field types)."""
        schema = output_schema_of(value, where)
        if schema is None or schema.check_formats == check_formats or schema.target is not None:
            return schema
        return replace(schema, check_formats=check_formats)

    @property
    def schema(self) -> dict[str, Any]:
        """The JSON schema replies are checked against (a fresh copy)."""
        return dict(json.loads(self.schema_json))

    def response_format(self) -> dict[str, Any]:
        """OpenAI's chat ``response_format`` for this schema (a fresh dict)."""
        return {
            "type": "json_schema",
            "json_schema": {
                "name": self.name,
                "schema": json.loads(self._sent_json),
                "strict": self.strict,
            },
        }

    def instruction(self) -> str:
        """What a model without native structured output is told, in a system message."""
        return (
            "Reply with one JSON value and nothing else (no prose, no code fence). It must "
            f"conform to this JSON schema, named {self.name}:\n{self._sent_json}"
        )

    def validate(self, text: Any) -> Any:
        """``text`` parsed: an instance of :attr:`target`, or plain Python values. Raises
        :class:`StructuredOutputError` saying what does not conform. A reply wrapped in one
        Markdown code fence is read inside it."""
        raw = _text_of(text)
        body = raw.strip()
        fenced = _FENCE.match(body)
        if fenced:
            body = fenced.group(1).strip()
        if self.target is not None:
            return self._validate_target(raw, body)
        try:
            value = json.loads(body)
        except ValueError as e:
            raise self.error(raw, [f"the reply is not JSON: {e}"]) from e
        found = _schema_validator.problems(value, self.schema_json, self.check_formats)
        if found:
            raise self.error(raw, found)
        return value

    def _validate_target(self, raw: str, body: str) -> Any:
        from pydantic import ValidationError

        try:
            return _adapter(self.target).validate_json(body)
        except ValidationError as e:
            raise self.error(raw, _pydantic_problems(e)) from e

    def error(self, raw: str, found: list[str], attempts: int = 1) -> StructuredOutputError:
        """The error a reply ``raw`` gets for the ``found`` problems."""
        return StructuredOutputError(self.name, raw, found, attempts)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OutputSchema):
            return NotImplemented
        return (self.name, self.strict, self.target, self.schema_json, self.check_formats) == (
            other.name,
            other.strict,
            other.target,
            other.schema_json,
            other.check_formats,
        )

    def __hash__(self) -> int:
        return hash((self.name, self.strict, self.schema_json))


def output_schema_of(value: Any, where: str = "response_format") -> OutputSchema | None:
    """See :meth:`OutputSchema.of`."""
    if value is None or isinstance(value, OutputSchema):
        return value
    if isinstance(value, type):
        return _of_type(value, where)
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{where}: expected a pydantic model class, a JSON-schema dict or "
            f'{{"type": "json_schema", "json_schema": {{...}}}}, got {type(value).__name__}'
        )
    kind = value.get("type")
    if kind in _UNTYPED and set(value) == {"type"}:
        return None
    if kind == "json_schema":
        inner = value.get("json_schema", value)
        if not isinstance(inner, Mapping) or not isinstance(inner.get("schema"), Mapping):
            raise ConfigError(
                f'{where}: a "json_schema" response_format needs a schema dict under '
                '"json_schema": {"name": ..., "schema": {...}}'
            )
        strict = inner.get("strict")
        if strict is not None and not isinstance(strict, bool):
            raise ConfigError(f"{where}: strict must be true or false, got {strict!r}")
        name = inner.get("name") or inner["schema"].get("title") or _DEFAULT_NAME
        return _checked(_build(str(name), _plain(inner["schema"], where), strict, None), where)
    schema = _plain(value, where)
    return _checked(_build(str(schema.get("title") or _DEFAULT_NAME), schema, None, None), where)


def _checked(schema: OutputSchema, where: str) -> OutputSchema:
    """``schema`` once the ``jsonschema`` library has found it a valid schema of its draft."""
    _schema_validator.check_schema(schema.schema_json, where)
    return schema


@functools.lru_cache(maxsize=256)
def _of_type(target: type, where: str) -> OutputSchema:
    from pydantic import PydanticUserError

    try:
        schema = _adapter(target).json_schema()
    except (PydanticUserError, TypeError, ValueError) as e:
        raise ConfigError(
            f"{where}: cannot make a JSON schema of {target.__qualname__}: {e}"
        ) from None
    return _build(target.__name__, schema, None, target)


@functools.lru_cache(maxsize=256)
def _adapter(target: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(target)


def _plain(schema: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A JSON copy of ``schema`` (never the caller's dict); ConfigError when it is not JSON."""
    try:
        copied = json.loads(json.dumps(schema))
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: the schema is not JSON data: {e}") from None
    return dict(copied)


def _build(name: str, schema: dict[str, Any], strict: bool | None, target: Any) -> OutputSchema:
    name = _NAME_OK.sub("_", name)[:64] or _DEFAULT_NAME
    sent = schema
    if strict is not False:
        try:
            sent = _strict_form(schema)
            strict = True
        except _NotStrict:
            strict = bool(strict)  # asked for: sent as given, the API decides
    return OutputSchema(
        name=name,
        strict=bool(strict),
        target=target,
        # Key order kept: a strict model writes the fields in the schema's order.
        schema_json=json.dumps(schema),
        _sent_json=json.dumps(sent),
    )


def _strict_form(root: dict[str, Any]) -> dict[str, Any]:
    """``root`` as OpenAI's strict mode takes it; _NotStrict when it cannot be."""
    types = root.get("type")
    if types != "object" and "properties" not in root:
        raise _NotStrict("the root is not an object")
    return dict(_strict_node(root))


def _strict_node(node: Any) -> Any:
    if not isinstance(node, Mapping):
        raise _NotStrict("a boolean schema")
    if _NOT_STRICT.intersection(node):
        raise _NotStrict(sorted(_NOT_STRICT.intersection(node)))
    out = {k: v for k, v in node.items() if k != "default"}
    types = node.get("type")
    is_object = types == "object" or (isinstance(types, list) and "object" in types)
    if is_object or "properties" in node:
        properties = node.get("properties")
        if not properties or node.get("additionalProperties", False) is not False:
            raise _NotStrict("a free-form object")
        out["properties"] = {k: _strict_node(v) for k, v in properties.items()}
        out["required"] = list(properties)
        out["additionalProperties"] = False
    if isinstance(node.get("items"), Mapping):
        out["items"] = _strict_node(node["items"])
    elif "items" in node:
        raise _NotStrict("tuple items")
    for key in ("anyOf", "allOf"):
        if key in node:
            out[key] = [_strict_node(sub) for sub in node[key]]
    for key in ("$defs", "definitions"):
        if isinstance(node.get(key), Mapping):
            out[key] = {k: _strict_node(v) for k, v in node[key].items()}
    return out


def _text_of(content: Any) -> str:
    """A reply's text: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, Mapping) and "text" in p
        )
    return str(content)


def _pydantic_problems(error: Any) -> list[str]:
    return _schema_validator.capped(
        f"{_schema_validator.location(e.get('loc', ()))}: {e.get('msg')}" + _got(e)
        for e in error.errors(include_url=False)
    )


def _got(e: Mapping[str, Any]) -> str:
    if e.get("type") in ("missing", "json_invalid"):
        return ""
    text = repr(e.get("input"))
    return f" (got {text if len(text) <= 60 else text[:57] + '...'})"
