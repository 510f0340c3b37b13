"""AutoGen's pydantic compatibility names (``autogen._pydantic``).

AutoGen kept one code path for pydantic 1 and one for pydantic 2 behind these names. parley
requires pydantic 2 (``pydantic>=2.6``), so each name is the pydantic 2 path and
``PYDANTIC_V1`` is false; they stay for code written against AutoGen that imports them.

``evaluate_forwardref`` is parley's own: AutoGen re-exported a private pydantic helper
(``_typing_extra.eval_type_lenient``) that newer pydantic releases renamed. It evaluates with
the same rules as the tool schemas (:func:`parley._signatures.evaluate_annotation`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import JsonSchemaValue
from pydantic.version import VERSION as _PYDANTIC_VERSION

from ._signatures import evaluate_annotation

__all__ = ("JsonSchemaValue", "evaluate_forwardref", "model_dump", "model_dump_json", "type2schema")

PYDANTIC_V1: bool = _PYDANTIC_VERSION.startswith("1.")


def type2schema(t: Any) -> JsonSchemaValue:
    """The JSON schema pydantic gives the type ``t`` (``int`` -> ``{"type": "integer"}``,
    ``None`` -> ``{"type": "null"}``, a model -> its full schema)."""
    return TypeAdapter(t).json_schema()


def model_dump(model: BaseModel) -> dict[str, Any]:
    """The model's fields as a dict (``model.model_dump()``)."""
    return model.model_dump()


def model_dump_json(model: BaseModel) -> str:
    """The model as compact JSON (``model.model_dump_json()``: ``{"a":1,"b":null}``)."""
    return model.model_dump_json()


def evaluate_forwardref(
    value: Any, globalns: dict[str, Any] | None = None, localns: dict[str, Any] | None = None
) -> Any:
    """The type that ``value`` (a string, a ``typing.ForwardRef``, or a type holding them, such
    as ``list["Pt"]``) names in ``globalns``/``localns``; ``None`` is ``NoneType``.

    Lenient, as AutoGen's: when it cannot be evaluated (an unknown name, a string that is not
    an expression), ``value`` comes back unchanged.
    """
    try:
        return evaluate_annotation(value, globalns, localns)
    except Exception:
        # Whatever the failure (NameError, SyntaxError, a TypeError from a bad subscript),
        # the caller asked for a best effort and decides what an unresolved value means.
        return value
