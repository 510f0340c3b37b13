"""Check a JSON value against a JSON Schema: the problems, each with where it is, in words.

Typed structured output (:mod:`parley.oai._structured`) checks a model's reply against a plain
JSON-schema dict with this; a pydantic model's replies are checked by pydantic. It covers the
keywords structured-output APIs take (OpenAI, Gemini, Ollama, Anthropic): ``type``, ``enum``,
``const``, ``properties`` / ``required`` / ``additionalProperties`` / ``patternProperties``,
``minProperties`` / ``maxProperties``, ``items`` / ``prefixItems`` / ``minItems`` /
``maxItems`` / ``uniqueItems``, ``minLength`` / ``maxLength`` / ``pattern``, the numeric
bounds and ``multipleOf``, ``anyOf`` / ``oneOf`` / ``allOf`` / ``not``, and local ``$ref``
(``#/$defs/...``, ``#/definitions/...``, ``#``). Annotations (``title``, ``description``,
``default``, ``format``, ``examples``) do not constrain, as JSON Schema 2020-12 says; other
keywords are ignored. A value is JSON as ``json.loads`` returns it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["problems"]

# A $ref cycle that consumes no data ({"$ref": "#"} at the root) would never end.
_MAX_DEPTH = 200
_BOUNDS = (
    ("minimum", "at least"),
    ("maximum", "at most"),
    ("exclusiveMinimum", "more than"),
    ("exclusiveMaximum", "less than"),
)
_PY_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (Mapping, "object"),
)
_TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")


def problems(value: Any, schema: Any) -> list[str]:
    """What is wrong with ``value`` under ``schema``; empty when it conforms."""
    found: list[str] = []
    _check(value, schema, schema, "$", found, 0)
    return found


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    for kind, name in _PY_TYPES:  # bool before int: True is an int to Python, not to JSON
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _is(value: Any, name: str) -> bool:
    actual = _type_of(value)
    if name == "number":
        return actual in ("integer", "number")
    if name == "integer":
        return actual == "integer" or (actual == "number" and float(value).is_integer())
    return actual == name


def _same(a: Any, b: Any) -> bool:
    """JSON equality: 1 equals 1.0, but true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _resolve(ref: str, root: Any) -> Any:
    if not ref.startswith("#"):
        raise ValueError(f"only local references are supported, got $ref {ref!r}")
    node = root
    for part in [p for p in ref[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise ValueError(f"$ref {ref!r} points at nothing in the schema")
    return node


def _check(value: Any, schema: Any, root: Any, at: str, out: list[str], depth: int) -> None:
    if depth > _MAX_DEPTH:
        out.append(f"{at}: the schema nests deeper than {_MAX_DEPTH} levels")
        return
    if schema is True or schema == {}:
        return
    if schema is False:
        out.append(f"{at}: no value is allowed here")
        return
    if not isinstance(schema, Mapping):
        out.append(f"{at}: the schema here is not an object ({_short(schema)})")
        return
    if "$ref" in schema:
        try:
            target = _resolve(str(schema["$ref"]), root)
        except ValueError as e:
            out.append(f"{at}: {e}")
            return
        _check(value, target, root, at, out, depth + 1)
    before = len(out)
    _check_type(value, schema, at, out)
    if len(out) > before:
        return  # the other keywords would only repeat that the type is wrong
    if "enum" in schema and not any(_same(value, e) for e in schema["enum"]):
        out.append(f"{at}: {_short(value)} is not one of {_short(list(schema['enum']))}")
    if "const" in schema and not _same(value, schema["const"]):
        out.append(f"{at}: expected {_short(schema['const'])}, got {_short(value)}")
    kind = _type_of(value)
    if kind == "object":
        _check_object(value, schema, root, at, out, depth)
    elif kind == "array":
        _check_array(value, schema, root, at, out, depth)
    elif kind == "string":
        _check_string(value, schema, at, out)
    elif kind in ("integer", "number"):
        _check_number(value, schema, at, out)
    _check_combinators(value, schema, root, at, out, depth)


def _check_type(value: Any, schema: Mapping[str, Any], at: str, out: list[str]) -> None:
    wanted = schema.get("type")
    if wanted is None:
        return
    names = [wanted] if isinstance(wanted, str) else list(wanted)
    unknown = [n for n in names if n not in _TYPES]
    if unknown:
        out.append(f"{at}: the schema names unknown type(s) {unknown}")
    elif not any(_is(value, n) for n in names):
        expected = " or ".join(names)
        out.append(f"{at}: expected {expected}, got {_type_of(value)} {_short(value)}")


def _check_object(
    value: Mapping[str, Any],
    schema: Mapping[str, Any],
    root: Any,
    at: str,
    out: list[str],
    depth: int,
) -> None:
    properties = schema.get("properties") or {}
    for name in schema.get("required") or ():
        if name not in value:
            out.append(f"{at}: the required field {name!r} is missing")
    patterns = schema.get("patternProperties") or {}
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        where = f"{at}.{name}"
        matched = False
        if name in properties:
            matched = True
            _check(item, properties[name], root, where, out, depth + 1)
        for pattern, sub in patterns.items():
            if re.search(pattern, name):
                matched = True
                _check(item, sub, root, where, out, depth + 1)
        if not matched:
            if extra is False:
                out.append(f"{at}: the field {name!r} is not allowed (no additional fields)")
            elif extra is not True:
                _check(item, extra, root, where, out, depth + 1)
    low, high = schema.get("minProperties"), schema.get("maxProperties")
    if low is not None and len(value) < low:
        out.append(f"{at}: expected at least {low} fields, got {len(value)}")
    if high is not None and len(value) > high:
        out.append(f"{at}: expected at most {high} fields, got {len(value)}")


def _check_array(
    value: list[Any], schema: Mapping[str, Any], root: Any, at: str, out: list[str], depth: int
) -> None:
    prefix = schema.get("prefixItems") or []
    items = schema.get("items")
    if isinstance(items, list):  # draft 4-7 tuple form
        prefix, items = items, schema.get("additionalItems")
    for i, item in enumerate(value):
        if i < len(prefix):
            _check(item, prefix[i], root, f"{at}[{i}]", out, depth + 1)
        elif items is not None:
            _check(item, items, root, f"{at}[{i}]", out, depth + 1)
    low, high = schema.get("minItems"), schema.get("maxItems")
    if low is not None and len(value) < low:
        out.append(f"{at}: expected at least {low} items, got {len(value)}")
    if high is not None and len(value) > high:
        out.append(f"{at}: expected at most {high} items, got {len(value)}")
    if schema.get("uniqueItems"):
        for i, item in enumerate(value):
            if any(_same(item, other) for other in value[:i]):
                out.append(f"{at}: items must be unique; {_short(item)} repeats")
                break


def _check_string(value: str, schema: Mapping[str, Any], at: str, out: list[str]) -> None:
    low, high = schema.get("minLength"), schema.get("maxLength")
    if low is not None and len(value) < low:
        out.append(f"{at}: expected at least {low} characters, got {len(value)}")
    if high is not None and len(value) > high:
        out.append(f"{at}: expected at most {high} characters, got {len(value)}")
    pattern = schema.get("pattern")
    if pattern is not None and not re.search(pattern, value):
        out.append(f"{at}: {_short(value)} does not match the pattern {pattern!r}")


def _check_number(value: float, schema: Mapping[str, Any], at: str, out: list[str]) -> None:
    for key, words in _BOUNDS:
        bound = schema.get(key)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool):
            holds = {
                "minimum": value >= bound,
                "maximum": value <= bound,
                "exclusiveMinimum": value > bound,
                "exclusiveMaximum": value < bound,
            }[key]
            if not holds:
                out.append(f"{at}: expected {words} {bound}, got {value}")
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0:
        quotient = value / step
        if not math.isclose(quotient, round(quotient), rel_tol=1e-9, abs_tol=1e-9):
            out.append(f"{at}: expected a multiple of {step}, got {value}")


def _check_combinators(
    value: Any, schema: Mapping[str, Any], root: Any, at: str, out: list[str], depth: int
) -> None:
    for sub in schema.get("allOf") or ():
        _check(value, sub, root, at, out, depth + 1)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if not options:
            continue
        fits = 0
        first_reasons: list[str] = []
        for sub in options:
            reasons: list[str] = []
            _check(value, sub, root, at, reasons, depth + 1)
            if not reasons:
                fits += 1
            elif not first_reasons:
                first_reasons = reasons
        if fits == 0:
            why = f" (the first: {first_reasons[0]})" if first_reasons else ""
            out.append(f"{at}: {_short(value)} fits none of the {len(options)} {key} options{why}")
        elif key == "oneOf" and fits > 1:
            out.append(f"{at}: {_short(value)} fits {fits} of the oneOf options, not exactly one")
    if "not" in schema:
        reasons = []
        _check(value, schema["not"], root, at, reasons, depth + 1)
        if not reasons:
            out.append(f"{at}: {_short(value)} must not match the schema under 'not'")
