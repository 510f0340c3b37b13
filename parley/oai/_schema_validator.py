"""A plain JSON-schema dict's replies checked by the ``jsonschema`` library: every keyword of
the schema's draft is enforced, none silently skipped.

The draft is the one the schema's ``$schema`` names (Draft 2020-12 when it names none, or one
``jsonschema`` does not know). ``format`` is an annotation unless format checking is asked for
(:meth:`parley.oai.OutputSchema.of` with ``check_formats=True``), as JSON Schema 2020-12 says.
``$ref`` resolves inside the schema (``#/$defs/...``) and to the published meta-schemas; nothing
is fetched over the network: a reference to anywhere else is a :class:`ConfigError`.

``jsonschema`` is imported when the first schema dict is made, never by ``import parley``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import Any

from ..exceptions import ConfigError

__all__ = ["MAX_PROBLEMS", "capped", "check_schema", "location", "problems"]

#: How many problems one reply reports (the model is shown them; the rest are counted).
MAX_PROBLEMS = 10
_MAX_MESSAGE = 200
_MAX_OPTIONS = 3
# The library says "[1] is too short" without the bound: the line adds it.
_BOUNDS = frozenset(
    {"minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"}
)


def location(path: Iterable[Any]) -> str:
    """A JSON location as ``$.field[0].name``."""
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str, check_formats: bool) -> Any:
    import json

    from jsonschema import Draft202012Validator, validators
    from jsonschema_specifications import REGISTRY

    schema = json.loads(schema_json)
    # An explicit default: an unknown $schema is read as 2020-12, not warned about.
    cls = validators.validator_for(schema, default=Draft202012Validator)
    return cls(
        schema,
        # The meta-schemas only, and no retrieval: the library's default would fetch a remote
        # $ref over the network (with a warning).
        registry=REGISTRY,
        format_checker=cls.FORMAT_CHECKER if check_formats else None,
    )


def check_schema(schema_json: str, where: str) -> None:
    """ConfigError naming ``where`` when the schema is not a valid schema of its draft."""
    from jsonschema.exceptions import SchemaError

    validator = _validator(schema_json, False)
    try:
        type(validator).check_schema(validator.schema)
    except SchemaError as e:
        raise ConfigError(
            f"{where}: not a valid JSON schema: {location(e.absolute_path)}: {_short(e.message)}"
        ) from None


def problems(value: Any, schema_json: str, check_formats: bool = False) -> list[str]:
    """What is wrong with ``value`` (JSON as ``json.loads`` gives it) under the schema: one
    ``"<where>: <what>"`` line per problem, at most :data:`MAX_PROBLEMS` and a count of the
    rest; empty when it conforms."""
    from referencing.exceptions import Unresolvable

    validator = _validator(schema_json, check_formats)
    try:
        return capped(_lines(validator.iter_errors(value)))
    except Unresolvable as e:
        raise ConfigError(f"response_format: the schema's $ref cannot be resolved: {e}") from e


def _lines(errors: Iterator[Any]) -> Iterator[str]:
    for error in errors:
        line = f"{location(error.absolute_path)}: {_short(error.message)}"
        if error.validator in _BOUNDS:
            line += f" ({error.validator} {error.validator_value})"
        if error.context:  # anyOf / oneOf: why each option failed (its first reason)
            line += f" ({_options(error.context)})"
        yield line


def _options(context: list[Any]) -> str:
    first: dict[Any, Any] = {}
    for sub in context:
        first.setdefault(sub.relative_schema_path[0], sub)
    shown = [
        f"option {i + 1 if isinstance(i, int) else i}: "
        f"{location(sub.absolute_path)}: {_short(sub.message)}"
        for i, sub in list(first.items())[:_MAX_OPTIONS]
    ]
    if len(first) > _MAX_OPTIONS:
        shown.append(f"{len(first) - _MAX_OPTIONS} more options")
    return "; ".join(shown)


def capped(lines: Iterable[str]) -> list[str]:
    """The first :data:`MAX_PROBLEMS` of ``lines``, and how many more there were."""
    found: list[str] = []
    more = 0
    for line in lines:
        if len(found) < MAX_PROBLEMS:
            found.append(line)
        else:
            more += 1
    if more:
        found.append(f"... and {more} more problem{'s' if more > 1 else ''}")
    return found


def _short(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."
