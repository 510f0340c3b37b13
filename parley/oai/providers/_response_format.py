"""OpenAI's ``response_format`` as the native provider clients read it.

Whatever form a user gave (a pydantic class, a schema dict, AutoGen's forms), a provider client
receives OpenAI's chat shape: ``{"type": "json_schema", "json_schema": {"name", "schema",
"strict"}}`` or ``{"type": "json_object"}``. A client whose ``STRUCTURED_OUTPUT`` is
``"native"`` maps it to its API's own mechanism with :func:`requested`; the reply text it hands
back is the JSON document, whatever the mechanism.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...exceptions import ConfigError

__all__ = ["OutputSchema", "requested", "schema_of"]


@dataclass(frozen=True)
class OutputSchema:
    """A ``json_schema`` response format: its name, JSON schema, OpenAI's ``strict`` flag and
    its description (None when it has none)."""

    name: str
    schema: Mapping[str, Any]
    strict: bool = False
    description: str | None = None


def requested(params: Mapping[str, Any]) -> OutputSchema | bool:
    """What the request's ``response_format`` asks for: an :class:`OutputSchema`, True for a
    JSON object of any shape (``json_object``), False for text (none given, ``text``).
    A malformed one is a :class:`~parley.exceptions.ConfigError` naming what is wrong."""
    fmt = params.get("response_format")
    if fmt is None:
        return False
    kind = fmt.get("type") if isinstance(fmt, Mapping) else None
    if kind == "text":
        return False
    if kind == "json_object":
        return True
    if kind != "json_schema":
        raise ConfigError(
            "response_format must be {'type': 'json_schema', 'json_schema': {...}}, "
            f"{{'type': 'json_object'}} or {{'type': 'text'}}, not {fmt!r}"
        )
    spec = fmt.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, Mapping) else None
    if not isinstance(schema, Mapping):
        raise ConfigError("response_format's json_schema needs a 'schema' that is a JSON object")
    description = spec.get("description")
    return OutputSchema(
        name=str(spec.get("name") or "response"),
        schema=schema,
        strict=bool(spec.get("strict", False)),
        description=description if isinstance(description, str) else None,
    )


def schema_of(params: Mapping[str, Any]) -> OutputSchema | None:
    """The request's :class:`OutputSchema`, None when it asks for no schema."""
    found = requested(params)
    return found if isinstance(found, OutputSchema) else None
