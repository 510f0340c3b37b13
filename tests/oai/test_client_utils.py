"""``parley.oai.client_utils`` (AutoGen's ``autogen.oai.client_utils``): the parameter check
and the ``hide_tools`` rule a model client of one's own uses, with AutoGen's results."""

from __future__ import annotations

from typing import Any

import pytest

from parley.exceptions import ConfigError
from parley.oai.client_utils import logger_formatter, should_hide_tools, validate_parameter

NUM = (int, float)

GOOD = {
    "model": "some/model-72B",
    "max_tokens": 800,
    "stream": False,
    "temperature": 1,
    "top_k": 40,
    "repetition_penalty": 0.5,
    "presence_penalty": 1.5,
    "safety_model": "Guard-7b",
}


@pytest.mark.parametrize(
    ("name", "types", "allow_none", "default", "bounds"),
    [
        ("model", str, False, None, None),
        ("max_tokens", int, True, 512, (0, None)),
        ("stream", bool, False, False, None),
        ("temperature", NUM, True, None, None),
        ("top_k", int, True, None, None),
        ("repetition_penalty", float, True, None, None),
        ("presence_penalty", NUM, True, None, (-2, 2)),
        ("safety_model", str, True, None, None),
    ],
)
def test_a_valid_value_is_returned_as_given(
    recwarn: pytest.WarningsRecorder,
    name: str,
    types: Any,
    allow_none: bool,
    default: Any,
    bounds: Any,
) -> None:
    assert validate_parameter(GOOD, name, types, allow_none, default, bounds, None) == GOOD[name]
    assert len(recwarn) == 0


def test_none_stays_none_only_where_allowed() -> None:
    assert (
        validate_parameter({"max_tokens": None}, "max_tokens", int, True, 512, (0, None), None)
        is None
    )
    with pytest.warns(
        UserWarning, match="Config error - max_tokens cannot be None, defaulting to 512."
    ):
        assert (
            validate_parameter({"max_tokens": None}, "max_tokens", int, False, 512, (0, None), None)
            == 512
        )
    with pytest.warns(UserWarning, match="temperature cannot be None"):
        assert (
            validate_parameter(
                {"temperature": None}, "temperature", NUM, False, 0.7, (0.0, 1.0), None
            )
            == 0.7
        )


@pytest.mark.parametrize(
    ("name", "value", "types", "default", "bounds", "message"),
    [
        ("stream", "Yes", bool, False, None, "stream must be of type bool, defaulting to False."),
        (
            "temperature",
            "0.5",
            NUM,
            None,
            None,
            r"temperature must be of type \(int, float\) or None",
        ),
        ("top_k", "50", int, None, None, "top_k must be of type int or None"),
        ("min_p", "0.2", NUM, None, (0, 1), r"min_p must be of type \(int, float\) or None"),
        ("safety_model", False, str, None, None, "safety_model must be of type str or None"),
        (
            "max_tokens",
            -200,
            int,
            512,
            (0, None),
            "max_tokens has numerical bounds, >= 0, or can be None, defaulting to 512.",
        ),
        (
            "presence_penalty",
            -5,
            NUM,
            None,
            (-2, 2),
            "presence_penalty has numerical bounds, >= -2 and <= 2, or can be None",
        ),
        (
            "frequency_penalty",
            5,
            NUM,
            None,
            (-2, 2),
            "frequency_penalty has numerical bounds, >= -2 and <= 2",
        ),
        ("top_p", 3, NUM, None, (None, 1), "top_p has numerical bounds <= 1, or can be None"),
    ],
)
def test_a_wrong_value_falls_back_to_the_default_with_a_warning(
    name: str, value: Any, types: Any, default: Any, bounds: Any, message: str
) -> None:
    allow_none = name != "stream"
    with pytest.warns(UserWarning, match=f"Config error - {message}"):
        assert (
            validate_parameter({name: value}, name, types, allow_none, default, bounds, None)
            == default
        )


def test_a_value_outside_the_bounds_without_none_allowed() -> None:
    with pytest.warns(
        UserWarning,
        match=r"temperature has numerical bounds, >= 0.0 and <= 1.0, defaulting to 1.0\.$",
    ):
        assert (
            validate_parameter(
                {"temperature": 23}, "temperature", NUM, False, 1.0, (0.0, 1.0), None
            )
            == 1.0
        )


def test_allowed_values() -> None:
    allowed = ["Guard-7b", "Guard-13b"]
    assert (
        validate_parameter(
            {"safety_model": "Guard-7b"}, "safety_model", str, True, None, None, allowed
        )
        == "Guard-7b"
    )
    with pytest.warns(
        UserWarning, match=r"stream must be one of these values \[\[False\]\], defaulting to False"
    ):
        assert (
            validate_parameter({"stream": True}, "stream", bool, False, False, None, [False])
            is False
        )


def test_allowed_values_must_be_a_list() -> None:
    with pytest.raises(TypeError, match="allowed_values should be a list or None, got str"):
        validate_parameter({}, "param", str, True, None, None, "not_a_list")  # type: ignore[arg-type]


def test_a_missing_parameter_takes_the_default_silently(recwarn: pytest.WarningsRecorder) -> None:
    assert validate_parameter({}, "max_tokens", int, True, 512, (0, None), None) == 512
    assert len(recwarn) == 0


def test_the_log_format_is_autogens() -> None:
    assert (
        logger_formatter._fmt == "[%(name)s: %(asctime)s] {%(lineno)d} %(levelname)s - %(message)s"
    )


# -- should_hide_tools -------------------------------------------------------------------------


def _call(call_id: str, name: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
        ],
    }


def _result(call_id: str) -> dict[str, Any]:
    # AutoGen's own example answers a call in a "user" message carrying the call's id.
    return {"role": "user", "tool_call_id": call_id, "content": "done"}


def _tool(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": {}}},
    }


START = [{"role": "system", "content": "You play chess."}, {"role": "user", "content": "Move."}]
TOOLS = [_tool("make_move"), _tool("get_legal_moves")]
NONE_RAN = [
    *START,
    _call("a", "get_legal_moves"),
    _call("b", "get_legal_moves"),
    _call("c", "make_move"),
]
ONE_RAN = [*START, _call("a", "get_legal_moves"), _result("a"), _call("c", "make_move")]
ALL_RAN = [
    *START,
    _call("a", "get_legal_moves"),
    _result("a"),
    _call("c", "make_move"),
    _result("c"),
]


@pytest.mark.parametrize(
    ("messages", "tools", "expected"),
    [
        (ALL_RAN, [], {"if_all_run": False, "if_any_run": False, "never": False}),
        (ALL_RAN, TOOLS, {"if_all_run": True, "if_any_run": True, "never": False}),
        (NONE_RAN, TOOLS, {"if_all_run": False, "if_any_run": False, "never": False}),
        (ONE_RAN, TOOLS, {"if_all_run": False, "if_any_run": True, "never": False}),
    ],
)
def test_should_hide_tools_as_autogen(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], expected: dict[str, bool]
) -> None:
    assert {how: should_hide_tools(messages, tools, how) for how in expected} == expected


def test_a_tool_result_in_a_tool_message_counts_too() -> None:
    messages = [
        *START,
        _call("a", "make_move"),
        {"role": "tool", "tool_call_id": "a", "content": "ok"},
    ]
    assert should_hide_tools(messages, [_tool("make_move")], "if_all_run")


def test_an_unknown_hide_tools_value_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match="not_a_valid_value") as raised:
        should_hide_tools(ONE_RAN, TOOLS, "not_a_valid_value")
    assert isinstance(raised.value, ConfigError)
