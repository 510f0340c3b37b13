"""parley.function_utils (AutoGen's autogen.function_utils): tool schemas, model loading, serialisation, argument validation.

This module uses ``from __future__ import annotations``, so every function defined here has string
annotations: the schema and validation code must evaluate them in the defining module. Functions
with real (non-string) annotations are compiled by :func:`_plain`.
"""

from __future__ import annotations

import asyncio
import datetime
import enum
import functools
import inspect
import json
import logging
import pickle
import subprocess
import sys
import textwrap
import unittest.mock
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, ValidationError
from pydantic.errors import PydanticSchemaGenerationError

from parley.function_utils import (
    ArgumentsValidationError,
    Function,
    Parameters,
    ToolFunction,
    get_default_values,
    get_function_schema,
    get_load_param_if_needed_function,
    get_missing_annotations,
    get_param_annotations,
    get_parameter_json_schema,
    get_parameters,
    get_required_params,
    get_typed_annotation,
    get_typed_return_annotation,
    get_typed_signature,
    load_basemodels_if_needed,
    serialize_to_str,
    validate_arguments,
)


class Pt(BaseModel):
    x: int
    y: float = 1.0


class Line(BaseModel):
    start: Pt
    end: Pt | None = None


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Size(int, enum.Enum):
    S = 1
    L = 3


PT_SCHEMA = {
    "properties": {
        "x": {"title": "X", "type": "integer"},
        "y": {"default": 1.0, "title": "Y", "type": "number"},
    },
    "required": ["x"],
    "title": "Pt",
    "type": "object",
}


def _plain(source: str, **namespace: Any) -> Any:
    """The last function defined by ``source``, compiled without ``from __future__ import
    annotations`` (which compile() would otherwise inherit from this module)."""
    ns: dict[str, Any] = {
        "Annotated": Annotated,
        "Optional": Optional,
        "Literal": Literal,
        "Pt": Pt,
        **namespace,
    }
    code = compile(textwrap.dedent(source), "<plain>", "exec", dont_inherit=True)
    exec(code, ns)
    return [v for v in ns.values() if inspect.isfunction(v)][-1]


def _dumps(x: Any) -> str:
    # json.dumps keeps key order, so comparing dumps compares order too.
    return json.dumps(x)


# --- get_function_schema -------------------------------------------------------------------------


def spec_f(  # type: ignore[no-untyped-def]  # `e` is unannotated on purpose
    a: Annotated[str, "param a"],
    p: Pt,
    b: int = 2,
    c: Annotated[Optional[float], "param c"] = None,  # noqa: UP045 - AutoGen's documented example
    d: Literal["u", "v"] = "u",
    e=3,
) -> str:
    return ""


SPEC_SCHEMA = {
    "type": "function",
    "function": {
        "description": "the verified example",
        "name": "spec_f",
        "parameters": {
            "type": "object",
            "properties": {
                "a": {"type": "string", "description": "param a"},
                "p": {**PT_SCHEMA, "description": "p"},
                "b": {"type": "integer", "default": 2, "description": "b"},
                "c": {
                    "anyOf": [{"type": "number"}, {"type": "null"}],
                    "default": None,
                    "description": "param c",
                },
                "d": {"enum": ["u", "v"], "type": "string", "default": "u", "description": "d"},
            },
            "required": ["a", "p"],
        },
    },
}


def test_spec_verified_example_exactly(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="parley.function_utils"):
        schema = get_function_schema(spec_f, description="the verified example")
    assert _dumps(schema) == _dumps(SPEC_SCHEMA)
    assert "'spec_f'" in caplog.text
    assert "'e'" in caplog.text  # unannotated with default: left out, logged


def test_spec_verified_example_with_real_annotations() -> None:
    f = _plain(
        """
        def spec_f(a: Annotated[str, "param a"], p: Pt, b: int = 2,
                   c: Annotated[Optional[float], "param c"] = None,
                   d: Literal["u", "v"] = "u", e=3) -> str:
            return ""
        """
    )
    assert _dumps(get_function_schema(f, description="the verified example")) == _dumps(SPEC_SCHEMA)


def t_literal_int(level: Literal[1, 2, 3] = 1) -> str:
    return ""


def t_enum(color: Color, size: Size = Size.L) -> str:
    return ""


def t_optional(n: Optional[int], m: int | None = None) -> str:  # noqa: UP045
    return ""


def t_list(xs: list[int], names: list[str] | None = None) -> str:
    return ""


def t_dict(weights: dict[str, float]) -> str:
    return ""


def t_nested(line: Line) -> str:
    return ""


def t_annotated(
    city: Annotated[str, "The city name"], days: Annotated[int, "How many days"] = 3
) -> str:
    return ""


def t_defaults(
    flag: bool = False, ratio: float = 0.5, tag: str = "x", color: Color = Color.RED
) -> str:
    return ""


def t_any(blob: Any, tup: tuple[int, str]) -> str:
    return ""


SCHEMA_TABLE: list[tuple[Any, dict[str, Any], list[str]]] = [
    (
        t_literal_int,
        {"level": {"enum": [1, 2, 3], "type": "integer", "default": 1, "description": "level"}},
        [],
    ),
    (
        t_enum,
        {
            "color": {
                "enum": ["red", "blue"],
                "title": "Color",
                "type": "string",
                "description": "color",
            },
            # An enum member default is written as its value, which JSON can carry.
            "size": {
                "enum": [1, 3],
                "title": "Size",
                "type": "integer",
                "default": 3,
                "description": "size",
            },
        },
        ["color"],
    ),
    (
        t_optional,
        {
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "n"},
            "m": {
                "anyOf": [{"type": "integer"}, {"type": "null"}],
                "default": None,
                "description": "m",
            },
        },
        ["n"],
    ),
    (
        t_list,
        {
            "xs": {"items": {"type": "integer"}, "type": "array", "description": "xs"},
            "names": {
                "anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}],
                "default": None,
                "description": "names",
            },
        },
        ["xs"],
    ),
    (
        t_dict,
        {
            "weights": {
                "additionalProperties": {"type": "number"},
                "type": "object",
                "description": "weights",
            }
        },
        ["weights"],
    ),
    (
        t_nested,
        {
            "line": {
                "$defs": {"Pt": PT_SCHEMA},
                "properties": {
                    "start": {"$ref": "#/$defs/Pt"},
                    "end": {
                        "anyOf": [{"$ref": "#/$defs/Pt"}, {"type": "null"}],
                        "default": None,
                    },
                },
                "required": ["start"],
                "title": "Line",
                "type": "object",
                "description": "line",
            }
        },
        ["line"],
    ),
    (
        t_annotated,
        {
            "city": {"type": "string", "description": "The city name"},
            "days": {"type": "integer", "default": 3, "description": "How many days"},
        },
        ["city"],
    ),
    (
        t_defaults,
        {
            "flag": {"type": "boolean", "default": False, "description": "flag"},
            "ratio": {"type": "number", "default": 0.5, "description": "ratio"},
            "tag": {"type": "string", "default": "x", "description": "tag"},
            "color": {
                "enum": ["red", "blue"],
                "title": "Color",
                "type": "string",
                "default": "red",
                "description": "color",
            },
        },
        [],
    ),
    (
        t_any,
        {
            "blob": {"description": "blob"},
            "tup": {
                "maxItems": 2,
                "minItems": 2,
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "type": "array",
                "description": "tup",
            },
        },
        ["blob", "tup"],
    ),
]


@pytest.mark.parametrize(
    ("func", "properties", "required"), SCHEMA_TABLE, ids=[f.__name__ for f, _, _ in SCHEMA_TABLE]
)
def test_schema_table(func: Any, properties: dict[str, Any], required: list[str]) -> None:
    schema = get_function_schema(func, description="desc")
    expected = {
        "type": "function",
        "function": {
            "description": "desc",
            "name": func.__name__,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }
    assert _dumps(schema) == _dumps(expected)
    json.dumps(schema)  # every schema must be sendable


def test_name_override_and_legacy_function_shape() -> None:
    schema = get_function_schema(t_dict, name="weigh", description="Weigh things.")
    assert schema["function"]["name"] == "weigh"
    assert list(schema) == ["type", "function"]
    assert list(schema["function"]) == ["description", "name", "parameters"]
    assert list(schema["function"]["parameters"]) == ["type", "properties", "required"]


def test_no_parameters() -> None:
    def ping() -> str:
        return "pong"

    assert get_function_schema(ping, description="Ping.")["function"]["parameters"] == {
        "type": "object",
        "properties": {},
        "required": [],
    }


def test_defaults_json_can_not_carry() -> None:
    when = datetime.date(2024, 5, 1)
    opaque = object()

    def f(day: datetime.date = when, thing: Any = opaque) -> str:
        return ""

    props = get_function_schema(f, description="x")["function"]["parameters"]["properties"]
    assert props["day"]["default"] == "2024-05-01"
    # Nothing can encode it: kept as is, as AutoGen does (the request will fail to serialise).
    assert props["thing"]["default"] is opaque


def test_missing_annotations_name_function_and_parameters() -> None:
    def lookup(b, a, c: int, d=1) -> str:  # type: ignore[no-untyped-def]
        return ""

    with pytest.raises(TypeError) as info:
        get_function_schema(lookup, description="x")
    message = str(info.value)
    assert "function 'lookup'" in message
    assert "'a', 'b'" in message  # sorted, quoted
    assert "'c'" not in message
    assert "'d'" not in message
    # AutoGen's wording is kept, so tests written against AutoGen still match.
    assert "without default values must be annotated" in message


def test_var_args_are_required_and_need_annotations() -> None:
    def f(a: int, *args: int, **kwargs: str) -> str:
        return ""

    schema = get_function_schema(f, description="x")["function"]["parameters"]
    assert schema["required"] == ["a", "args", "kwargs"]
    assert schema["properties"]["args"] == {"type": "integer", "description": "args"}

    def g(*args, **kwargs) -> str:  # type: ignore[no-untyped-def]
        return ""

    with pytest.raises(TypeError, match="'args', 'kwargs'"):
        get_function_schema(g, description="x")


def test_non_string_annotated_metadata_is_a_value_error() -> None:
    def f(b: Annotated[int, 5]) -> str:
        return ""

    # AutoGen's text, then the function it belongs to.
    with pytest.raises(
        ValueError,
        match=r"^Invalid description 5 for parameter b, should be a string\. \(function 'f', ",
    ):
        get_function_schema(f, description="x")
    with pytest.raises(
        ValueError, match=r"^Invalid description 5 for parameter b, should be a string\. "
    ):
        get_parameter_json_schema("b", Annotated[int, 5], {})


def test_missing_return_annotation_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    def f(a: int):  # type: ignore[no-untyped-def]
        return a

    with caplog.at_level(logging.WARNING, logger="parley.function_utils"):
        get_function_schema(f, description="x")
    assert "return type of the function 'f' is not annotated" in caplog.text

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="parley.function_utils"):
        get_function_schema(t_dict, description="x")
    assert caplog.text == ""


def test_unevaluable_string_annotation_names_function_and_parameter() -> None:
    class Local(BaseModel):
        v: int

    def f(x: Local) -> str:
        return ""

    with pytest.raises(NameError, match=r"'Local'.*parameter 'x' of function 'f'"):
        get_function_schema(f, description="x")


def test_unsupported_type_raises_from_pydantic() -> None:
    class Opaque:
        pass

    f = _plain("def f(o: Opaque) -> str: return ''", Opaque=Opaque)
    with pytest.raises(PydanticSchemaGenerationError) as info:
        get_function_schema(f, description="x")
    if sys.version_info >= (3, 11):
        assert "parameter 'o' of function 'f'" in "".join(info.value.__notes__)


def test_wrapped_partial_and_callable_objects_evaluate_in_their_module() -> None:
    def deco(func: Any) -> Any:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **kwargs)

        return wrapper

    wrapped = deco(t_annotated)
    assert get_function_schema(wrapped, description="x") == get_function_schema(
        t_annotated, description="x"
    )

    part = functools.partial(t_annotated, days=4)
    props = get_function_schema(part, description="x")["function"]["parameters"]["properties"]
    assert props["days"]["default"] == 4
    assert get_function_schema(part, description="x")["function"]["name"] == "t_annotated"

    class Tool:
        def __call__(self, p: Pt, color: Color) -> str:
            return ""

    schema = get_function_schema(Tool(), name="tool", description="x")
    assert schema["function"]["parameters"]["required"] == ["p", "color"]


# --- helpers (11.2) ------------------------------------------------------------------------------


def test_typed_annotation_and_signature() -> None:
    ns = {"Pt": Pt, "Annotated": Annotated}
    assert get_typed_annotation("Pt", ns) is Pt
    assert get_typed_annotation(int, {}) is int
    assert get_typed_annotation("list[Pt]", ns) == list[Pt]
    if sys.version_info >= (3, 11):  # 3.10's typing leaves quoted names in list[...] as strings
        assert get_typed_annotation("list['Pt']", ns) == list[Pt]
    assert get_typed_annotation('Annotated[int, "n"]', ns) == Annotated[int, "n"]

    sig = get_typed_signature(spec_f)
    assert sig.return_annotation is inspect.Signature.empty
    assert sig.parameters["p"].annotation is Pt
    assert sig.parameters["e"].annotation is inspect.Parameter.empty
    assert get_typed_return_annotation(spec_f) is str
    assert get_typed_return_annotation(lambda: None) is None

    assert get_param_annotations(sig) == {
        "a": Annotated[str, "param a"],
        "p": Pt,
        "b": int,
        "c": Annotated[Optional[float], "param c"],  # noqa: UP045
        "d": Literal["u", "v"],
    }
    required = get_required_params(sig)
    assert required == ["a", "p"]
    assert get_default_values(sig) == {"b": 2, "c": None, "d": "u", "e": 3}
    assert get_missing_annotations(sig, required) == (set(), {"e"})


def test_get_parameters_and_models() -> None:
    params = get_parameters(["a"], {"a": int, "b": str}, {"b": "z"})
    assert isinstance(params, Parameters)
    assert params.model_dump() == {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "a"},
            "b": {"type": "string", "default": "z", "description": "b"},
        },
        "required": ["a"],
    }
    tool = ToolFunction(function=Function(description="d", name="n", parameters=params))
    assert tool.type == "function"
    assert tool.model_dump()["function"]["parameters"] == params.model_dump()
    assert get_parameter_json_schema("n", Annotated[int, "count"], {"n": 1}) == {
        "type": "integer",
        "default": 1,
        "description": "count",
    }


def test_get_load_param_if_needed_function() -> None:
    for t in (Pt, Annotated[Pt, "a point"], Optional[Pt], Pt | None, Annotated[Pt | None, "p"]):  # noqa: UP045
        loader = get_load_param_if_needed_function(t)
        assert loader is not None, t
        assert loader({"x": 1}, t) == Pt(x=1)
    for other in (int, str, list[Pt], dict[str, Any], Pt | int, Any, Optional[int]):  # noqa: UP045
        assert get_load_param_if_needed_function(other) is None, other


# --- load_basemodels_if_needed (11.3) ------------------------------------------------------------


def test_load_basemodels_sync() -> None:
    seen: dict[str, Any] = {}

    def move(
        p: Annotated[Pt, "start"],
        q: Pt | None = None,
        r: Optional[Pt] = None,  # noqa: UP045
        n: int = 0,
    ) -> str:
        seen.update(p=p, q=q, r=r, n=n)
        return "ok"

    wrapped = load_basemodels_if_needed(move)
    assert wrapped.__name__ == "move"
    assert not inspect.iscoroutinefunction(wrapped)

    assert wrapped(p={"x": 1}, q={"x": 2, "y": 3.5}, n=4) == "ok"
    assert seen == {"p": Pt(x=1), "q": Pt(x=2, y=3.5), "r": None, "n": 4}

    # Instances and None pass through; omitted defaulted models stay omitted (AutoGen: KeyError).
    wrapped(p=Pt(x=5), q=None)
    assert seen["p"] == Pt(x=5)
    assert seen["q"] is None
    assert seen["r"] is None

    # Positional arguments are not converted (as in AutoGen).
    wrapped({"x": 1})
    assert seen["p"] == {"x": 1}

    with pytest.raises(ValidationError):
        wrapped(p={"x": "not a number"})
    with pytest.raises(ValidationError):
        wrapped(p=[1, 2])


async def test_load_basemodels_async() -> None:
    async def scale(p: Pt, k: float = 2.0) -> Pt:
        await asyncio.sleep(0)
        return Pt(x=p.x, y=p.y * k)

    wrapped = load_basemodels_if_needed(scale)
    assert inspect.iscoroutinefunction(wrapped)
    assert await wrapped(p={"x": 1, "y": 2}) == Pt(x=1, y=4.0)


def test_load_basemodels_uses_the_models_init() -> None:
    calls: list[dict[str, Any]] = []

    class Counted(BaseModel):
        v: int

        def __init__(self, **data: Any) -> None:
            calls.append(data)
            super().__init__(**data)

    def f(c: Any) -> Any:
        return c

    f.__annotations__ = {"c": Counted}
    assert load_basemodels_if_needed(f)(c={"v": 1}) == Counted(v=1)
    assert calls[0] == {"v": 1}


# --- serialize_to_str (11.4) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("already text", "already text"),
        ({"a": "é"}, '{"a": "é"}'),
        (3, "3"),
        (2.5, "2.5"),
        (None, "null"),
        (True, "true"),
        ([1, "b"], '[1, "b"]'),
        (Pt(x=1), '{"x":1,"y":1.0}'),
    ],
)
def test_serialize_to_str(value: Any, text: str) -> None:
    assert serialize_to_str(value) == text


def test_serialize_to_str_rejects_unencodable_values() -> None:
    with pytest.raises(TypeError):
        serialize_to_str(object())


# --- validate_arguments --------------------------------------------------------------------------


def add(a: int, b: int) -> int:
    return a + b


def test_validate_arguments_converts() -> None:
    def plan(  # type: ignore[no-untyped-def]  # `note` is unannotated on purpose
        line: Line,
        color: Color,
        size: Size = Size.S,
        level: Literal["low", "high"] = "low",
        xs: list[int] | None = None,
        weights: dict[str, float] | None = None,
        ratio: float = 1.0,
        label: str = "",
        note=None,
    ) -> str:
        return ""

    kwargs = validate_arguments(
        plan,
        {
            "line": {"start": {"x": "1"}, "end": {"x": 2, "y": 0.5}},
            "color": "blue",
            "size": 3,
            "level": "high",
            "xs": [1, "2"],
            "weights": {"a": 1},
            "ratio": 2,
            "label": 7,  # models write numbers where text is asked for
            "note": {"anything": [1]},
        },
    )
    assert kwargs == {
        "line": Line(start=Pt(x=1), end=Pt(x=2, y=0.5)),
        "color": Color.BLUE,
        "size": Size.L,
        "level": "high",
        "xs": [1, 2],
        "weights": {"a": 1.0},
        "ratio": 2.0,
        "label": "7",
        "note": {"anything": [1]},
    }
    assert isinstance(kwargs["ratio"], float)
    # Omitted defaulted parameters stay omitted: the function applies its own defaults.
    assert validate_arguments(plan, {"line": {"start": {"x": 1}}, "color": "red"}) == {
        "line": Line(start=Pt(x=1)),
        "color": Color.RED,
    }


def test_validate_arguments_brief_example() -> None:
    with pytest.raises(ArgumentsValidationError) as info:
        validate_arguments(add, {"a": 1, "b": "x", "c": 3})
    assert str(info.value) == (
        "Invalid arguments for add: b: Input should be a valid integer (got 'x'); "
        "c: unexpected argument"
    )
    assert isinstance(info.value, ValueError)
    assert info.value.function_name == "add"
    assert info.value.problems == [
        "b: Input should be a valid integer (got 'x')",
        "c: unexpected argument",
    ]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "a: missing required argument; b: missing required argument"),
        (
            {"a": 1, "b": 2.5},
            "b: Input should be a valid integer, got a number with a fractional part (got 2.5)",
        ),
        ({"a": [1], "b": 2}, "a: Input should be a valid integer (got [1])"),
        ({"a": 1, "b": 2, "z": 0, "y": 1}, "z: unexpected argument; y: unexpected argument"),
        ([1, 2], "arguments must be a JSON object, got list"),
    ],
)
def test_validate_arguments_failures(arguments: Any, message: str) -> None:
    with pytest.raises(ArgumentsValidationError) as info:
        validate_arguments(add, arguments)
    assert str(info.value) == f"Invalid arguments for add: {message}"


def test_validate_arguments_nested_paths_enums_and_literals() -> None:
    def draw(line: Line, color: Color, level: Literal["low", "high"], xs: list[int]) -> str:
        return ""

    with pytest.raises(ArgumentsValidationError) as info:
        validate_arguments(
            draw,
            {
                "line": {"start": {"x": "q"}, "end": {"y": 1}},
                "color": "green",
                "level": "mid",
                "xs": [1, "a"],
            },
        )
    assert info.value.problems == [
        "line.start.x: Input should be a valid integer (got 'q')",
        "line.end.x: missing required field",
        "color: Input should be 'red' or 'blue' (got 'green')",
        "level: Input should be 'low' or 'high' (got 'mid')",
        "xs[1]: Input should be a valid integer (got 'a')",
    ]


def test_validate_arguments_truncates_long_values() -> None:
    with pytest.raises(ArgumentsValidationError) as info:
        validate_arguments(add, {"a": "y" * 500, "b": 1})
    assert len(str(info.value)) < 150
    assert str(info.value).endswith("...)")


def test_validate_arguments_var_args_and_kwargs() -> None:
    def anything(a: int, *args: int, **kwargs: Any) -> str:
        return ""

    assert validate_arguments(anything, {"a": "1", "zz": [1], "args": 2}) == {
        "a": 1,
        "zz": [1],
        "args": 2,
    }

    def typed(a: int, **options: float) -> str:
        return ""

    assert validate_arguments(typed, {"a": 1, "t": "0.5"}) == {"a": 1, "t": 0.5}
    with pytest.raises(
        ArgumentsValidationError, match=r"t: Input should be a valid number \(got 'hot'\)"
    ):
        validate_arguments(typed, {"a": 1, "t": "hot"})

    def star(*args: int) -> str:
        return ""

    assert validate_arguments(star, {}) == {}
    with pytest.raises(ArgumentsValidationError, match="args: unexpected argument"):
        validate_arguments(star, {"args": [1]})


def test_validate_arguments_awkward_parameter_names() -> None:
    def f(json: int, _private: str, model_config: bool = False, copy: Any = None) -> str:
        return ""

    assert validate_arguments(f, {"json": "1", "_private": "p", "model_config": True}) == {
        "json": 1,
        "_private": "p",
        "model_config": True,
    }
    with pytest.raises(ArgumentsValidationError, match="_private: missing required argument"):
        validate_arguments(f, {"json": 1})


def test_validate_arguments_function_name() -> None:
    def tool(a: int) -> str:
        return ""

    with pytest.raises(ArgumentsValidationError, match=r"^Invalid arguments for tool: "):
        validate_arguments(tool, {})
    with pytest.raises(ArgumentsValidationError, match=r"^Invalid arguments for custom: "):
        validate_arguments(tool, {}, name="custom")
    tool._name = "registered"  # type: ignore[attr-defined]  # what register_for_llm sets
    with pytest.raises(ArgumentsValidationError, match=r"^Invalid arguments for registered: "):
        validate_arguments(tool, {})


def test_validate_arguments_real_annotations_methods_and_async() -> None:
    f = _plain("def f(p: Pt, n: int = 1) -> str: return ''")
    assert validate_arguments(f, {"p": {"x": "2"}, "n": "3"}) == {"p": Pt(x=2), "n": 3}

    class Calc:
        def mul(self, a: int, b: int) -> int:
            return a * b

        async def amul(self, a: int, b: int) -> int:
            return a * b

    calc = Calc()
    assert validate_arguments(calc.mul, {"a": "2", "b": 3}) == {"a": 2, "b": 3}
    assert validate_arguments(calc.amul, {"a": "2", "b": 3}) == {"a": 2, "b": 3}
    # The plain function still has `self`, and is not confused with the bound method.
    with pytest.raises(ArgumentsValidationError, match="self: missing required argument"):
        validate_arguments(Calc.mul, {"a": 2, "b": 3})

    part = functools.partial(add, b=5)
    assert validate_arguments(part, {"a": "1"}) == {"a": 1}


def test_arguments_validation_error_pickles() -> None:
    error = ArgumentsValidationError("add", ["a: missing required argument"])
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == str(error)
    assert copy.problems == error.problems


def test_import_parley_does_not_import_pydantic() -> None:
    code = "import sys, parley; assert 'pydantic' not in sys.modules, 'pydantic imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# -- AutoGen 0.2's texts and schemas, which code written for it matches on ----------------------


def test_warning_for_a_missing_return_annotation_is_one_ready_made_string() -> None:
    def no_return(x: int):  # type: ignore[no-untyped-def]
        return x

    with unittest.mock.patch("parley.function_utils.logger.warning") as warning:
        get_function_schema(no_return, description="d")
    warning.assert_called_once_with(
        "The return type of the function 'no_return' is not annotated. Although annotating it is "
        "optional, the function should return either a string, a subclass of "
        "'pydantic.BaseModel'."
    )


def test_warning_for_unannotated_defaults_lists_them_sorted_and_nothing_more() -> None:
    def tool(  # type: ignore[no-untyped-def]
        first: Annotated[str, "first"], zed=1, mid: float = 0.5, alpha="a", omega=None
    ) -> str:
        return first

    with unittest.mock.patch("parley.function_utils.logger.warning") as warning:
        schema = get_function_schema(tool, description="d")
    warning.assert_called_once_with(
        "The following parameters of the function 'tool' with default values are not "
        "annotated: 'alpha', 'omega', 'zed'."
    )
    # The unannotated ones are left out of the schema; they are not required either.
    parameters = schema["function"]["parameters"]
    assert sorted(parameters["properties"]) == ["first", "mid"]
    assert parameters["required"] == ["first"]


def test_missing_annotations_raise_autogen_s_exact_text() -> None:
    def tool(a: int, y, b, c: float = 1.0) -> str:  # type: ignore[no-untyped-def]
        return ""

    with pytest.raises(TypeError) as info:
        get_function_schema(tool, description="d")
    assert str(info.value) == (
        "All parameters of the function 'tool' without default values must be annotated. "
        "The annotations are missing for the following parameters: 'b', 'y'"
    )


class Point(BaseModel):
    x: float
    label: str


def test_parameter_schema_keeps_the_default_object_itself() -> None:
    origin = Point(x=0.0, label="o")
    schema = get_parameter_json_schema("p", Point, {"p": origin})
    assert schema["default"] is origin
    assert schema["description"] == "p"
    assert schema["title"] == "Point"
    assert get_parameter_json_schema("p", Point, {}).get("default", "absent") == "absent"
    assert get_parameter_json_schema("s", Annotated[str, "text"], {"s": "v"}) == {
        "type": "string",
        "description": "text",
        "default": "v",
    }

    # The tool schema, which is sent, carries it as JSON (AutoGen left the object there).
    def draw(p: Point = origin) -> str:
        return ""

    sent = get_function_schema(draw, description="d")["function"]["parameters"]["properties"]
    assert sent["p"]["default"] == {"x": 0.0, "label": "o"}
    json.dumps(sent)


def test_required_defaults_and_missing_annotations_of_a_signature() -> None:
    def f(a: int, b, c: str = "c", d=4, *rest: int, e: float, **extra) -> None:  # type: ignore[no-untyped-def]
        return None

    signature = inspect.signature(f)
    assert get_required_params(signature) == ["a", "b", "rest", "e", "extra"]
    assert get_default_values(signature) == {"c": "c", "d": 4}
    missing, unannotated_with_default = get_missing_annotations(
        signature, get_required_params(signature)
    )
    assert missing == {"b", "extra"}
    assert unannotated_with_default == {"d"}


class Pair(BaseModel):
    left: int
    right: int


def test_serialize_to_str_and_loading_models_as_autogen() -> None:
    assert serialize_to_str("as is") == "as is"
    assert serialize_to_str({"ü": [1, None]}) == '{"ü": [1, null]}'
    assert json.loads(serialize_to_str(Pair(left=1, right=2))) == {"left": 1, "right": 2}

    @load_basemodels_if_needed
    def total(pair: Annotated[Pair, "the pair"], scale: int) -> int:
        return (pair.left + pair.right) * scale

    assert total(pair={"left": 2, "right": 3}, scale=10) == 50
