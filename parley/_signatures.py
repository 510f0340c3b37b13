"""Evaluating a callable's annotations where they were written: the typed signature shared by
the tool schema (:mod:`parley.function_utils`) and the argument validation
(:mod:`parley._tool_arguments`); and :func:`same_parameters`, for a function that takes another's
parameters without declaring them again. Standard library only, so all can import it at the top.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

__all__ = [
    "evaluate_annotation",
    "get_typed_annotation",
    "get_typed_return_annotation",
    "get_typed_signature",
    "name_of",
    "same_parameters",
]

P = ParamSpec("P")
R = TypeVar("R")

_EMPTY = inspect.Parameter.empty


def evaluate_annotation(
    annotation: Any, globalns: dict[str, Any] | None = None, localns: dict[str, Any] | None = None
) -> Any:
    """The type a string, a ``typing.ForwardRef`` or a type holding them (``list["Pt"]``)
    names in ``globalns``/``localns``; ``None`` is ``NoneType``. Raises what evaluating it
    raises (``NameError`` for an unknown name)."""

    # get_type_hints on a throwaway function evaluates the annotation and the forward
    # references nested in it (``List["Pt"]``; ``list["Pt"]`` from Python 3.11 on) with the
    # same rules as for any function; it has no defaults, so Python 3.10's implicit Optional
    # for ``= None`` never applies.
    def holder() -> None: ...

    holder.__annotations__ = {"value": annotation}
    globalns = {} if globalns is None else globalns
    return typing.get_type_hints(holder, globalns, localns, include_extras=True)["value"]


def get_typed_annotation(annotation: Any, globalns: dict[str, Any]) -> Any:
    """The annotation itself, or the object a string annotation names in ``globalns``."""
    if isinstance(annotation, str):
        return evaluate_annotation(annotation, globalns, globalns)
    return annotation


def _globals_of(call: Callable[..., Any]) -> dict[str, Any]:
    """The namespace the annotations of ``call`` were written in.

    ``inspect.signature`` looks through ``functools.wraps`` wrappers, partials and callable
    objects, so the names must be looked up where the underlying function was defined.
    """
    target: Any = call
    for _ in range(100):  # a bound on chains of wrappers, partials and methods
        if isinstance(target, functools.partial):
            target = target.func
        elif hasattr(target, "__wrapped__"):
            target = target.__wrapped__
        elif isinstance(target, types.MethodType):
            target = target.__func__
        elif not isinstance(target, types.FunctionType) and isinstance(
            call_method := inspect.getattr_static(type(target), "__call__", None),
            types.FunctionType,
        ):
            target = call_method  # a callable object
        else:
            break
    namespace = getattr(target, "__globals__", None)
    return namespace if isinstance(namespace, dict) else {}


def name_of(call: Callable[..., Any]) -> str:
    name = getattr(call, "__name__", None)
    if isinstance(name, str):
        return name
    if isinstance(call, functools.partial):
        return name_of(call.func)
    return type(call).__name__


def _typed(call: Callable[..., Any], what: str, annotation: Any, globalns: dict[str, Any]) -> Any:
    try:
        return get_typed_annotation(annotation, globalns)
    except NameError as e:
        # The usual cause: `from __future__ import annotations` with a type defined inside a
        # function body, which the module globals cannot see.
        raise NameError(
            f"Cannot evaluate the annotation {annotation!r} of {what} of function "
            f"'{name_of(call)}': {e}. Types used in annotations must be importable from the "
            "module that defines the function."
        ) from e


def get_typed_signature(call: Callable[..., Any]) -> inspect.Signature:
    """The signature of ``call`` with string annotations evaluated (return annotation dropped)."""
    signature = inspect.signature(call)
    globalns = _globals_of(call)
    return inspect.Signature(
        [
            p.replace(annotation=_typed(call, f"parameter '{p.name}'", p.annotation, globalns))
            for p in signature.parameters.values()
        ]
    )


def get_typed_return_annotation(call: Callable[..., Any]) -> Any:
    """The evaluated return annotation of ``call``, ``None`` when there is none."""
    annotation = inspect.signature(call).return_annotation
    if annotation is _EMPTY:
        return None
    return _typed(call, "the return value", annotation, _globals_of(call))


def same_parameters(model: Callable[P, Any]) -> Callable[[Callable[..., R]], Callable[P, R]]:
    """Decorator: the function, written as ``(*args, **kwargs)``, takes ``model``'s parameters,
    declared once there: mypy checks its callers (and an override) against them, and
    ``inspect.signature`` and ``help()`` show them, with ``model``'s docstring if it has none."""

    def give(fn: Callable[..., R]) -> Callable[P, R]:
        fn.__signature__ = inspect.signature(model)  # type: ignore[attr-defined]
        if fn.__doc__ is None:
            fn.__doc__ = model.__doc__
        return fn

    return give
