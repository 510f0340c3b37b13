"""Reading a JSON object out of a model's reply, repairing the usual breakage.

Models asked for "only a JSON object" still wrap it in a Markdown fence, put a sentence before
or after it, leave a comma before a closing bracket, quote with ``'`` as Python does, write
``True``/``None``, or put raw newlines inside strings. :func:`parse_json_reply` undoes those;
what it cannot read raises :class:`ReplyFormatError`, whose message says what is wrong in
words a model can act on.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["ReplyFormatError", "parse_json_reply"]

_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
_PYTHON_WORDS = {"True": "true", "False": "false", "None": "null"}
# A reply with more {...} groups than this is not worth trying each.
_MAX_OBJECTS = 32


class ReplyFormatError(ValueError):
    """A reply holds no readable JSON object; the message says why (for the model)."""


def _too_deep() -> ReplyFormatError:
    return ReplyFormatError("the JSON is nested too deeply; keep the object flat")


def parse_json_reply(text: str) -> dict[str, Any]:
    """The JSON object in ``text``, after repairing fences, surrounding prose, trailing commas,
    single quotes, bare keys, Python's ``True``/``False``/``None`` and raw control characters
    in strings.

    Raises :class:`ReplyFormatError` when no object can be read.
    """
    sources = [m.group(1) for m in _FENCE.finditer(text)]
    sources.append(text)
    first_error: ReplyFormatError | None = None
    for source in sources:
        try:
            return _parse(source)
        except ReplyFormatError as error:
            first_error = first_error or error
    assert first_error is not None
    raise first_error


def _parse(text: str) -> dict[str, Any]:
    try:
        return _as_object(json.loads(text, strict=False))
    except json.JSONDecodeError:
        pass
    except RecursionError:
        raise _too_deep() from None
    start = text.find("{")
    if start < 0:
        raise ReplyFormatError("the reply contains no JSON object (no '{' found)")
    end = text.rfind("}")
    widest_failure: ReplyFormatError | None = None
    if end > start:
        try:
            return _load_repaired(text[start : end + 1])
        except ReplyFormatError as error:
            widest_failure = error
    # Braces in the prose around the object: try each top-level {...}, longest first. One
    # that never closes ends the search: what follows it is inside it (a cut-off reply).
    spans, closed = _top_level_objects(text, start)
    for span in sorted(spans, key=lambda s: s[0] - s[1]):
        try:
            return _load_repaired(text[span[0] : span[1]])
        except ReplyFormatError:
            continue
    if widest_failure is None or not closed:
        raise ReplyFormatError(
            "the JSON object is not closed: the reply ends before its final '}' "
            "(was it cut off? keep it shorter)"
        )
    raise widest_failure


def _as_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        kind = {list: "list", str: "string", bool: "boolean"}.get(type(value), "value")
        raise ReplyFormatError(f"the reply is a JSON {kind}, not an object ({{...}})")
    return value


def _load_repaired(candidate: str) -> dict[str, Any]:
    try:
        return _as_object(json.loads(_normalise(candidate), strict=False))
    except RecursionError:
        raise _too_deep() from None
    except json.JSONDecodeError as error:
        raise ReplyFormatError(
            f"the reply is not valid JSON: {error.msg} at line {error.lineno}, "
            f"column {error.colno} of the object"
        ) from None


def _top_level_objects(text: str, start: int) -> tuple[list[tuple[int, int]], bool]:
    """The spans of the {...} not nested in one another from ``start`` on, and whether the
    last one closes."""
    spans: list[tuple[int, int]] = []
    i = start
    while i >= 0 and len(spans) < _MAX_OBJECTS:
        span = _balanced(text, i)
        if span is None:
            return spans, False
        spans.append(span)
        i = text.find("{", span[1])
    return spans, True


def _balanced(text: str, start: int) -> tuple[int, int] | None:
    """The span of the {...} opening at ``start``, strings (either quote) skipped."""
    depth = 0
    i = start
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i, _ = _string_end(text, i)
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return (start, i + 1)
        i += 1
    return None


def _string_end(text: str, start: int) -> tuple[int, bool]:
    """The index just after the string opening at ``start``, and whether it is closed (if not,
    the index is the end of the text)."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == quote:
            return i + 1, True
        else:
            i += 1
    return len(text), False


def _normalise(text: str) -> str:
    """Strict JSON from JSON-ish text: strings re-quoted with ``"``, trailing commas dropped,
    bare keys quoted, Python's constants spelled as JSON's. Text inside ``"`` strings is never
    changed."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            end, _ = _string_end(text, i)
            out.append(text[i:end])
            i = end
        elif c == "'":
            end, closed = _string_end(text, i)
            # An unclosed one is left as it is, for json to report.
            out.append(_requote(text[i + 1 : end - 1]) if closed else text[i:end])
            i = end
        elif c == ",":
            j = i + 1
            while j < n and text[j].isspace():
                j += 1
            if j >= n or text[j] not in "}]":
                out.append(c)
            i += 1
        elif c.isalpha() or c == "_":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            k = j
            while k < n and text[k].isspace():
                k += 1
            if k < n and text[k] == ":":
                out.append(f'"{word}"')  # a bare key, as in JavaScript
            else:
                out.append(_PYTHON_WORDS.get(word, word))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _requote(body: str) -> str:
    """A single-quoted string's body as a double-quoted JSON string."""
    out = ['"']
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append("'" if nxt == "'" else c + nxt)
            i += 2
            continue
        out.append('\\"' if c == '"' else c)
        i += 1
    out.append('"')
    return "".join(out)
