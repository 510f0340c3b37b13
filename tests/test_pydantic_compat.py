"""``parley._pydantic``: AutoGen's pydantic compatibility names (``autogen._pydantic``)."""

from __future__ import annotations

import typing
from typing import Any, ForwardRef, List, Optional, Tuple  # noqa: UP035 - AutoGen's spellings

import pydantic
import pytest
from pydantic import BaseModel

from parley import _pydantic
from parley._pydantic import (
    PYDANTIC_V1,
    JsonSchemaValue,
    evaluate_forwardref,
    model_dump,
    model_dump_json,
    type2schema,
)
from parley.function_utils import get_function_schema, serialize_to_str


class Point(BaseModel):
    x: int
    label: Optional[str] = None  # noqa: UP045


def test_public_names() -> None:
    assert set(_pydantic.__all__) == {
        "JsonSchemaValue",
        "model_dump",
        "model_dump_json",
        "type2schema",
        "evaluate_forwardref",
    }
    assert PYDANTIC_V1 is False
    assert pydantic.VERSION.startswith("1.") == PYDANTIC_V1
    assert JsonSchemaValue is pydantic.json_schema.JsonSchemaValue


@pytest.mark.parametrize(
    ("t", "schema"),
    [
        (int, {"type": "integer"}),
        (Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}),  # noqa: UP045
        (
            Tuple[int, str],  # noqa: UP006
            {
                "maxItems": 2,
                "minItems": 2,
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "type": "array",
            },
        ),
        (None, {"type": "null"}),
        (List[int], {"items": {"type": "integer"}, "type": "array"}),  # noqa: UP006
    ],
)
def test_type2schema(t: Any, schema: dict[str, Any]) -> None:
    assert type2schema(t) == schema


def test_type2schema_of_a_model_is_its_full_schema() -> None:
    assert type2schema(Point) == Point.model_json_schema()
    assert type2schema(Point)["title"] == "Point"


def test_model_dump_and_compact_json() -> None:
    class M(BaseModel):
        a: int
        b: Optional[int] = None  # noqa: UP045

    assert model_dump(M(a=1)) == {"a": 1, "b": None}
    assert model_dump_json(M(a=1)) == '{"a":1,"b":null}'


def test_function_utils_builds_with_the_same_helpers() -> None:
    def f(p: Point, n: int = 2) -> str:
        return ""

    schema = get_function_schema(f, description="d")
    assert schema["function"]["parameters"]["properties"]["n"] == {
        **type2schema(int),
        "default": 2,
        "description": "n",
    }
    assert serialize_to_str(Point(x=1)) == model_dump_json(Point(x=1))


# -- evaluate_forwardref --------------------------------------------------------------------------


def test_a_string_or_forward_ref_is_evaluated_in_the_given_namespaces() -> None:
    namespace = {"Point": Point}
    assert evaluate_forwardref("Point", namespace) is Point
    assert evaluate_forwardref(ForwardRef("Point"), namespace) is Point
    assert evaluate_forwardref("Point", None, namespace) is Point  # locals too
    assert evaluate_forwardref("int") is int  # builtins need no namespace


def test_nested_forward_refs_are_evaluated() -> None:
    assert evaluate_forwardref("list[Point]", {"Point": Point}) == list[Point]
    assert evaluate_forwardref(List["Point"], {"Point": Point}) == List[Point]  # noqa: UP006
    assert (
        evaluate_forwardref("Optional[Point]", {"Point": Point, "Optional": Optional})
        == (
            Optional[Point]  # noqa: UP045
        )
    )


def test_none_is_none_type() -> None:
    assert evaluate_forwardref(None) is type(None)


def test_locals_win_over_globals() -> None:
    assert evaluate_forwardref("T", {"T": int}, {"T": str}) is str


@pytest.mark.parametrize("value", ["Unknown", ForwardRef("Unknown"), "not an expression ((", 5])
def test_what_cannot_be_evaluated_comes_back_unchanged(value: Any) -> None:
    assert evaluate_forwardref(value, {}) is value


def test_a_type_without_forward_refs_is_itself() -> None:
    assert evaluate_forwardref(int) is int
    assert evaluate_forwardref(typing.Annotated[int, "x"]) == typing.Annotated[int, "x"]
