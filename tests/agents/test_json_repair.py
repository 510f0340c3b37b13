"""``parse_json_reply``: the JSON object in a model's reply, repaired; what cannot be read is
explained in words a model can act on."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parley.agents._json_repair import ReplyFormatError, parse_json_reply

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(), json_values, max_size=5)
# Prose a model writes around its JSON: anything but braces and backticks.
prose = st.text(st.characters(blacklist_characters="{}`", blacklist_categories=["Cs"]))


def dump_with_trailing_commas(value: Any) -> str:
    if isinstance(value, dict) and value:
        items = ", ".join(
            f"{json.dumps(k)}: {dump_with_trailing_commas(v)}" for k, v in value.items()
        )
        return "{" + items + ",\n}"
    if isinstance(value, list) and value:
        return "[" + ", ".join(dump_with_trailing_commas(v) for v in value) + " ,]"
    return json.dumps(value)


def single_quoted(text: str) -> str:
    body = json.dumps(text)[1:-1].replace('\\"', '"').replace("'", "\\'")
    return f"'{body}'"


def dump_with_single_quotes(value: Any) -> str:
    if isinstance(value, dict):
        items = ", ".join(
            f"{single_quoted(k)}: {dump_with_single_quotes(v)}" for k, v in value.items()
        )
        return "{" + items + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dump_with_single_quotes(v) for v in value) + "]"
    if isinstance(value, str):
        return single_quoted(value)
    return json.dumps(value)


@settings(max_examples=200, deadline=None)
@given(json_objects, prose, prose, st.booleans(), st.booleans())
def test_an_object_wrapped_in_fences_and_prose_parses_back(
    value: dict[str, Any], before: str, after: str, fenced: bool, ascii_only: bool
) -> None:
    body = json.dumps(value, ensure_ascii=ascii_only, indent=2)
    text = f"{before}\n```json\n{body}\n```\n{after}" if fenced else f"{before} {body} {after}"
    assert parse_json_reply(text) == value


@settings(max_examples=200, deadline=None)
@given(json_objects, prose)
def test_trailing_commas_are_dropped(value: dict[str, Any], before: str) -> None:
    assert parse_json_reply(before + dump_with_trailing_commas(value)) == value


@settings(max_examples=200, deadline=None)
@given(json_objects)
def test_single_quotes_are_read_as_double_quotes(value: dict[str, Any]) -> None:
    assert parse_json_reply(dump_with_single_quotes(value)) == value


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_parses_or_raises_a_reply_format_error(text: str) -> None:
    try:
        parsed: dict[str, Any] | str = parse_json_reply(text)
    except ReplyFormatError as error:
        parsed = str(error)
    assert isinstance(parsed, dict) or parsed  # an object, or a non-empty explanation


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('Here it is:\n```JSON\n{"a": [1, 2,],}\n```\nDone.', {"a": [1, 2]}),
        (
            "{'a': 'it\\'s', 'b': True, 'c': None, 'd': False}",
            {"a": "it's", "b": True, "c": None, "d": False},
        ),
        ('{thoughts: {"text": "x"}}', {"thoughts": {"text": "x"}}),
        ('{"text": "two\nlines"}', {"text": "two\nlines"}),
        ('I think {x} but {"a": {"b": 1}} is my answer', {"a": {"b": 1}}),
        ('{"quote": "she said \'hi\', then {left}"}', {"quote": "she said 'hi', then {left}"}),
    ],
)
def test_common_breakage_is_repaired(text: str, expected: dict[str, Any]) -> None:
    assert parse_json_reply(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("I will read the file now.", "contains no JSON object"),
        ('{"thoughts": {"text": "long', "not closed"),
        ('{"thoughts": {"text": "x"}', "not closed"),
        ('{"a" 1}', "not valid JSON: Expecting ':' delimiter at line 1, column 6"),
        ("[1, 2]", "a JSON list, not an object"),
        ('"just a string"', "a JSON string, not an object"),
    ],
)
def test_what_cannot_be_read_is_explained(text: str, message: str) -> None:
    with pytest.raises(ReplyFormatError) as info:
        parse_json_reply(text)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)  # callers may catch it as one


def test_absurd_nesting_is_a_format_error_not_a_crash() -> None:
    with pytest.raises(ReplyFormatError, match="nested too deeply"):
        parse_json_reply('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
