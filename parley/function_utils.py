"""Tool schemas from type hints, and the conversion of a model's JSON arguments back to them.

AutoGen's ``autogen.function_utils``: :func:`get_function_schema` builds the OpenAI tool schema of
a Python function from its annotations with pydantic v2, :func:`load_basemodels_if_needed` turns
dict arguments into pydantic models and :func:`serialize_to_str` turns a tool's result into the
text sent back to the model.

parley additions: :func:`validate_arguments` checks a model's arguments against the signature and
converts them (models, enums, numbers, lists...), raising :class:`ArgumentsValidationError` with a
message short and precise enough for the model to correct its call.

This module imports pydantic at the top, so nothing imported by ``parley/__init__.py`` may import it
at module level: ``import parley`` stays free of pydantic.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import types
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, Field
from pydantic_core import to_jsonable_python

# AutoGen's pydantic helpers, which the schemas and results below are built with.
from ._pydantic import JsonSchemaValue, model_dump, model_dump_json, type2schema

# The typed-signature helpers are public here, as in AutoGen; validation has its own module.
from ._signatures import (
    get_typed_annotation,
    get_typed_return_annotation,
    get_typed_signature,
    name_of,
)
from ._tool_arguments import ArgumentsValidationError, validate_arguments

__all__ = [
    "ArgumentsValidationError",
    "Function",
    "Parameters",
    "ToolFunction",
    "get_default_values",
    "get_function_schema",
    "get_load_param_if_needed_function",
    "get_missing_annotations",
    "get_param_annotations",
    "get_parameter_json_schema",
    "get_parameters",
    "get_required_params",
    "get_typed_annotation",
    "get_typed_return_annotation",
    "get_typed_signature",
    "load_basemodels_if_needed",
    "serialize_to_str",
    "validate_arguments",
]

logger = logging.getLogger(__name__)

_EMPTY = inspect.Parameter.empty


# --- Signature pieces ----------------------------------------------------------------------------


def get_param_annotations(typed_signature: inspect.Signature) -> dict[str, Any]:
    """Annotation of every annotated parameter, in signature order."""
    return {
        k: v.annotation for k, v in typed_signature.parameters.items() if v.annotation is not _EMPTY
    }


def get_required_params(typed_signature: inspect.Signature) -> list[str]:
    """Parameters without a default, in signature order (``*args``/``**kwargs`` included, as in
    AutoGen)."""
    return [k for k, v in typed_signature.parameters.items() if v.default is _EMPTY]


def get_default_values(typed_signature: inspect.Signature) -> dict[str, Any]:
    """Default value of every parameter that has one."""
    return {k: v.default for k, v in typed_signature.parameters.items() if v.default is not _EMPTY}


def get_missing_annotations(
    typed_signature: inspect.Signature, required: list[str]
) -> tuple[set[str], set[str]]:
    """``(required but unannotated, defaulted but unannotated)`` parameter names."""
    all_missing = {k for k, v in typed_signature.parameters.items() if v.annotation is _EMPTY}
    missing = all_missing & set(required)
    return missing, all_missing - missing


# --- Schema models -------------------------------------------------------------------------------


class Parameters(BaseModel):
    """The ``parameters`` object of a function schema."""

    type: Literal["object"] = "object"
    properties: dict[str, JsonSchemaValue]
    required: list[str]


class Function(BaseModel):
    """A legacy OpenAI function schema (the inner object of a tool schema)."""

    description: Annotated[str, Field(description="Description of the function")]
    name: Annotated[str, Field(description="Name of the function")]
    parameters: Annotated[Parameters, Field(description="Parameters of the function")]


class ToolFunction(BaseModel):
    """An OpenAI tool schema."""

    type: Literal["function"] = "function"
    function: Annotated[Function, Field(description="Function under tool")]


# --- Parameter schemas ---------------------------------------------------------------------------


def _description(k: str, v: Any, function_name: str | None = None) -> str:
    if get_origin(v) is not Annotated:
        return k
    text = v.__metadata__[0]
    if not isinstance(text, str):
        # AutoGen's text first (code matches on it), then where and how to fix it.
        where = f"function '{function_name}', " if function_name else ""
        raise ValueError(
            f"Invalid description {text} for parameter {k}, should be a string. "
            f'({where}use Annotated[T, "what the parameter means"])'
        )
    return text


def _jsonable_default(value: Any) -> Any:
    # AutoGen puts the default in the schema as is, and a value json cannot encode then breaks
    # every later API request. JSON values are kept untouched; others (enum members, models,
    # dates) become their JSON form; anything pydantic cannot encode either is left as it was.
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        try:
            return to_jsonable_python(value)
        except Exception:
            return value
    return value


def get_parameter_json_schema(k: str, v: Any, default_values: dict[str, Any]) -> JsonSchemaValue:
    """JSON schema of one parameter: pydantic's schema of the type, then ``default`` (if any) and
    ``description`` (the ``Annotated`` text, else the parameter name).

    The default is the value itself, as in AutoGen (a model instance stays one);
    :func:`get_function_schema` turns it into JSON for the request."""
    description = _description(k, v)
    schema: dict[str, Any] = type2schema(v)
    if k in default_values:
        schema["default"] = default_values[k]
    schema["description"] = description
    return schema


def get_parameters(
    required: list[str], param_annotations: dict[str, Any], default_values: dict[str, Any]
) -> Parameters:
    """The ``parameters`` object for the annotated parameters."""
    return Parameters(
        properties={
            k: get_parameter_json_schema(k, v, default_values)
            for k, v in param_annotations.items()
            if v is not _EMPTY
        },
        required=required,
    )


def get_function_schema(
    f: Callable[..., Any], *, name: str | None = None, description: str
) -> dict[str, Any]:
    """The OpenAI tool schema of ``f``, as AutoGen builds it.

    Example::

        def f(a: Annotated[str, "Parameter a"], b: int = 2) -> str: ...

        get_function_schema(f, description="function f")
        # {"type": "function",
        #  "function": {"description": "function f", "name": "f",
        #               "parameters": {"type": "object",
        #                              "properties": {
        #                                  "a": {"type": "string", "description": "Parameter a"},
        #                                  "b": {"type": "integer", "default": 2,
        #                                        "description": "b"}},
        #                              "required": ["a"]}}}

    Logs AutoGen's warnings (one string each) for a missing return annotation and for
    unannotated parameters with defaults, which are left out of the schema. Raises
    ``TypeError`` (AutoGen's text) if a parameter without default has no annotation and
    ``ValueError`` if an ``Annotated`` description is not a string. Unlike AutoGen, a default
    that JSON cannot carry (an enum member, a model, a date) is written in its JSON form, so the
    schema can be sent.
    """
    fname = name_of(f)
    typed_signature = get_typed_signature(f)
    required = get_required_params(typed_signature)
    default_values = get_default_values(typed_signature)
    param_annotations = get_param_annotations(typed_signature)
    missing, unannotated_with_default = get_missing_annotations(typed_signature, required)

    # AutoGen's texts, each logged as one ready-made string: code and tests match on them
    # (``mock.patch("...function_utils.logger.warning")``, ``assert_called_once_with(text)``).
    if inspect.signature(f).return_annotation is _EMPTY:
        logger.warning(
            f"The return type of the function '{fname}' is not annotated. Although annotating it "
            "is optional, the function should return either a string, a subclass of "
            "'pydantic.BaseModel'."
        )
    if unannotated_with_default:
        names = ", ".join(f"'{k}'" for k in sorted(unannotated_with_default))
        logger.warning(
            f"The following parameters of the function '{fname}' with default values are not "
            f"annotated: {names}."
        )
    if missing:
        names = ", ".join(f"'{k}'" for k in sorted(missing))
        raise TypeError(
            f"All parameters of the function '{fname}' without default values must be annotated. "
            f"The annotations are missing for the following parameters: {names}"
        )

    properties: dict[str, JsonSchemaValue] = {}
    for k, v in param_annotations.items():
        _description(k, v, fname)  # the ValueError names the function
        try:
            properties[k] = get_parameter_json_schema(k, v, default_values)
            if "default" in properties[k]:
                properties[k]["default"] = _jsonable_default(properties[k]["default"])
        except Exception as e:
            # pydantic's message names only the type; say which parameter of which function.
            # (add_note exists from Python 3.11 on.)
            add_note = getattr(e, "add_note", None)
            if add_note is not None:
                add_note(f"while building the schema of parameter '{k}' of function '{fname}'")
            raise

    tool = ToolFunction(
        function=Function(
            description=description,
            name=name if name else fname,
            parameters=Parameters(properties=properties, required=required),
        )
    )
    return model_dump(tool)


# --- Loading pydantic models ---------------------------------------------------------------------


def _strip_annotated(t: Any) -> Any:
    while get_origin(t) is Annotated:
        t = get_args(t)[0]
    return t


def _is_model(t: Any) -> bool:
    # On Python 3.10, list[Pt] passes isinstance(..., type) but not issubclass.
    return isinstance(t, type) and get_origin(t) is None and issubclass(t, BaseModel)


def _model_of(t: Any) -> tuple[type[BaseModel] | None, bool]:
    """``(model class, optional)`` for ``Model``, ``Annotated[Model, ...]``, ``Optional[Model]``
    and ``Model | None`` (at any nesting of ``Annotated``), else ``(None, False)``."""
    t = _strip_annotated(t)
    if _is_model(t):
        return t, False
    if get_origin(t) in (Union, types.UnionType):
        members = [_strip_annotated(a) for a in get_args(t)]
        non_none = [a for a in members if a is not type(None)]
        if len(non_none) == 1 and len(members) == 2 and _is_model(non_none[0]):
            return non_none[0], True
    return None, False


def _load_model(v: Any, t: Any) -> Any:
    model, optional = _model_of(t)
    if model is None or isinstance(v, model) or (optional and v is None):
        return v
    if isinstance(v, Mapping):
        # Model(**v) as AutoGen does, so that a model's own __init__ runs.
        return model(**v)
    return model.model_validate(v)  # a clear ValidationError instead of "not a mapping"


def get_load_param_if_needed_function(t: Any) -> Callable[[Any, Any], Any] | None:
    """A loader ``(value, annotation) -> value`` for annotations that are a pydantic model
    (also through ``Annotated``, and, unlike AutoGen, ``Optional[Model]``), else ``None``.

    The loader converts a dict to the model and passes instances (and ``None`` for optional
    models) through.
    """
    model, _ = _model_of(t)
    return _load_model if model is not None else None


def load_basemodels_if_needed(func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``func`` so that keyword arguments annotated with a pydantic model are converted from
    dicts to model instances before the call (async wrapper for coroutine functions).

    Positional arguments are passed unchanged; an omitted (defaulted) model argument is left
    omitted, where AutoGen raised ``KeyError``.
    """
    param_annotations = get_param_annotations(get_typed_signature(func))
    loaders = {
        k: (loader, t)
        for k, t in param_annotations.items()
        if (loader := get_load_param_if_needed_function(t)) is not None
    }

    def load(kwargs: dict[str, Any]) -> None:
        for k, (loader, t) in loaders.items():
            if k in kwargs:
                kwargs[k] = loader(kwargs[k], t)

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def _a_load_parameters_if_needed(*args: Any, **kwargs: Any) -> Any:
            load(kwargs)
            return await func(*args, **kwargs)

        return _a_load_parameters_if_needed

    @functools.wraps(func)
    def _load_parameters_if_needed(*args: Any, **kwargs: Any) -> Any:
        load(kwargs)
        return func(*args, **kwargs)

    return _load_parameters_if_needed


def serialize_to_str(x: Any) -> str:
    """A tool's result as text: str unchanged, a pydantic model as its JSON, anything else through
    ``json.dumps(ensure_ascii=False)`` (``TypeError`` if it cannot be encoded)."""
    if isinstance(x, str):
        return x
    if isinstance(x, BaseModel):
        return model_dump_json(x)
    return json.dumps(x, ensure_ascii=False)
