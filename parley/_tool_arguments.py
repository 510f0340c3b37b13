"""Validating a model's tool-call arguments against a function's signature (parley's addition
to ``function_utils``, re-exported there): converted to the annotated types, or one error that
names each failing field so the model can correct itself."""

from __future__ import annotations

import inspect
import reprlib
import types
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from ._signatures import get_typed_signature, name_of
from .exceptions import ArgumentsValidationError

__all__ = ["ArgumentsValidationError", "validate_arguments"]

_EMPTY = inspect.Parameter.empty


class _Validator:
    """A pydantic model of one function's keyword arguments (and an adapter for ``**kwargs``)."""

    def __init__(self, func: Callable[..., Any]) -> None:
        signature = get_typed_signature(func)
        fields: dict[str, Any] = {}
        # Field names are synthetic and parameter names are aliases: parameters named like
        # BaseModel attributes ("json", "copy") or starting with "_" are then ordinary fields.
        self.params: dict[str, str] = {}
        extra: Any = None
        for i, p in enumerate(signature.parameters.values()):
            if p.kind is inspect.Parameter.VAR_POSITIONAL:
                continue  # cannot be passed by keyword
            if p.kind is inspect.Parameter.VAR_KEYWORD:
                extra = Any if p.annotation is _EMPTY else p.annotation
                continue
            annotation = Any if p.annotation is _EMPTY else p.annotation
            field = Field(alias=p.name) if p.default is _EMPTY else Field(p.default, alias=p.name)
            fields[f"p{i}"] = (annotation, field)
            self.params[f"p{i}"] = p.name
        config = ConfigDict(
            # A function may take any class; only an instance of it is then accepted.
            arbitrary_types_allowed=True,
            # Models write 3 where "3" is meant; the function asked for a string.
            coerce_numbers_to_str=True,
        )
        self.model: type[BaseModel] = create_model(
            f"{name_of(func)}_arguments",
            __config__=ConfigDict(**config, extra="forbid" if extra is None else "ignore"),
            **fields,
        )
        # **kwargs: the other names are validated against its annotation. (Typed
        # __pydantic_extra__ would do it in one pass, but only from pydantic 2.8 or so.)
        self.extra: TypeAdapter[dict[str, Any]] | None = (
            None if extra is None else TypeAdapter(dict[str, extra], config=config)
        )
        # Only an untyped ``**kwargs`` (a proxy such as an MCP tool's, whose server checks the
        # arguments): any names and values pass, so there is nothing to ask pydantic.
        self.takes_anything = not fields and extra is Any

    def __call__(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if self.takes_anything and all(isinstance(k, str) for k in arguments):
            return dict(arguments)
        problems: list[str] = []
        kwargs: dict[str, Any] = {}
        try:
            validated = self.model.model_validate(arguments)
        except ValidationError as e:
            problems += [_problem(err) for err in e.errors()]
        else:
            given = validated.model_fields_set
            # Only what the model sent: the function applies its own defaults.
            kwargs = {p: getattr(validated, f) for f, p in self.params.items() if f in given}
        if self.extra is not None:
            known = set(self.params.values())
            try:
                kwargs.update(
                    self.extra.validate_python(
                        {k: v for k, v in arguments.items() if k not in known}
                    )
                )
            except ValidationError as e:
                problems += [_problem(err) for err in e.errors()]
        if problems:
            raise ArgumentsValidationError(name, problems)
        return kwargs


_reprs = reprlib.Repr()
_reprs.maxstring = _reprs.maxother = 160  # cut again below, at the end, to ``limit``


def _short_repr(value: Any, limit: int = 80) -> str:
    # reprlib stops at a few levels and items: the model may send a value nested thousands of
    # levels deep, which repr() would recurse into until RecursionError.
    text = _reprs.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _problem(err: Any) -> str:
    loc = err["loc"]
    path = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in loc).lstrip(".")
    top = len(loc) == 1
    if err["type"] == "missing":
        return f"{path}: missing required {'argument' if top else 'field'}"
    if err["type"] == "extra_forbidden":
        return f"{path}: unexpected {'argument' if top else 'field'}"
    msg = err["msg"]
    if err["type"].endswith("_parsing"):
        # "Input should be a valid integer, unable to parse string as an integer": the value
        # shown next to it already says that.
        msg = msg.split(", unable to parse", 1)[0]
    return f"{path}: {msg} (got {_short_repr(err.get('input'))})"


# Weak keys: a validator lives as long as its function. Callables that are unhashable or not
# weak-referenceable are validated without a cache. A bound method is a new object at every
# attribute access, so bound methods are cached by their function (the same signature for every
# instance), apart from the plain functions whose signature still has ``self``.
_validators: weakref.WeakKeyDictionary[Any, _Validator] = weakref.WeakKeyDictionary()
_method_validators: weakref.WeakKeyDictionary[Any, _Validator] = weakref.WeakKeyDictionary()


def _validator(func: Callable[..., Any]) -> _Validator:
    cache, key = (
        (_method_validators, func.__func__)
        if isinstance(func, types.MethodType)
        else (_validators, func)
    )
    try:
        return cache[key]
    except (KeyError, TypeError):
        pass
    validator = _Validator(func)
    try:
        cache[key] = validator
    except TypeError:
        pass
    return validator


def validate_arguments(
    func: Callable[..., Any], arguments: Mapping[str, Any], *, name: str | None = None
) -> dict[str, Any]:
    """Validate a model's JSON ``arguments`` against ``func``'s signature and return them
    converted to the annotated types, ready for ``func(**kwargs)``.

    Unannotated parameters accept anything, ``**kwargs`` accepts extra names (validated against
    its annotation), ``*args`` is ignored; omitted defaulted parameters stay omitted. Raises
    :class:`ArgumentsValidationError` naming the function (``name``, else the registered tool
    name ``func._name``, else ``func.__name__``) and every failing field.
    """
    name = name or getattr(func, "_name", None) or name_of(func)
    if not isinstance(arguments, Mapping):
        raise ArgumentsValidationError(
            name, [f"arguments must be a JSON object, got {type(arguments).__name__}"]
        )
    return _validator(func)(name, arguments)
