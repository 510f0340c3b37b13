"""Request parameters checked as AutoGen's provider clients checked them.

- :func:`validate_parameter`: one parameter, or its default (with a ``UserWarning`` naming the
  rule it broke) when it has the wrong type, is out of bounds or is not an allowed value;
- :class:`Param` and :func:`checked`: a provider's table of parameters, all checked at once;
  what a client sends (None: not sent) and what its ``parse_params`` reports;
- :func:`model_of`: the request's model, or AutoGen's error when it names none.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ...exceptions import ConfigAssertionError

__all__ = ["Param", "checked", "model_of", "validate_parameter"]


def _type_names(allowed_types: type | tuple[type, ...]) -> str:
    if isinstance(allowed_types, tuple):
        return "(" + ", ".join(t.__name__ for t in allowed_types) + ")"
    return allowed_types.__name__


def _bounds_problem(value: Any, bounds: Sequence[Any], allow_none: bool) -> str:
    low, high = bounds
    if (low is None or value >= low) and (high is None or value <= high):
        return ""
    problem = "has numerical bounds"
    if low is not None:
        problem += f", >= {low}"
    if high is not None:
        problem += f"{' and' if low is not None else ''} <= {high}"
    return problem + (", or can be None" if allow_none else "")


def _problem(
    value: Any,
    allowed_types: type | tuple[type, ...],
    allow_none: bool,
    numerical_bound: Sequence[Any] | None,
    allowed_values: list[Any] | None,
) -> str:
    """What is wrong with ``value`` (AutoGen's words), or "" when nothing is."""
    if value is None:
        return "" if allow_none else "cannot be None"
    if not isinstance(value, allowed_types):
        return f"must be of type {_type_names(allowed_types)}{' or None' if allow_none else ''}"
    # As in AutoGen, a parameter with bounds is checked against them only, not its values.
    if numerical_bound:
        return _bounds_problem(value, numerical_bound, allow_none)
    if allowed_values and value not in allowed_values:
        return (
            f"must be one of these values [{allowed_values}]"
            f"{', or can be None' if allow_none else ''}"
        )
    return ""


def validate_parameter(
    params: Mapping[str, Any],
    param_name: str,
    allowed_types: type | tuple[type, ...],
    allow_None: bool,
    default_value: Any,
    numerical_bound: Sequence[Any] | None,
    allowed_values: list[Any] | None,
) -> Any:
    """``params[param_name]`` (``default_value`` when missing) if it is of ``allowed_types``
    (or None, with ``allow_None``), within ``numerical_bound`` (``(low, high)``, either None
    for no bound) and among ``allowed_values``; otherwise ``default_value``, with a
    ``UserWarning`` naming the parameter and the rule it broke.

    ``allowed_values`` must be a list or None (``TypeError`` otherwise).
    """
    if allowed_values is not None and not isinstance(allowed_values, list):
        raise TypeError(
            f"allowed_values should be a list or None, got {type(allowed_values).__name__}"
        )
    value = params.get(param_name, default_value)
    problem = _problem(value, allowed_types, allow_None, numerical_bound, allowed_values)
    if not problem:
        return value
    warnings.warn(
        f"Config error - {param_name} {problem}, defaulting to {default_value}.",
        UserWarning,
        stacklevel=2,
    )
    return default_value


class Param(NamedTuple):
    """One parameter as AutoGen's client of a provider checked it."""

    name: str
    types: type | tuple[type, ...]
    allow_none: bool = True
    default: Any = None
    bounds: tuple[Any, Any] | None = None
    allowed: list[Any] | None = None


def checked(params: Mapping[str, Any], table: Sequence[Param]) -> dict[str, Any]:
    """Every parameter of ``table``, checked (:func:`validate_parameter`), by name."""
    return {
        p.name: validate_parameter(
            params, p.name, p.types, p.allow_none, p.default, p.bounds, p.allowed
        )
        for p in table
    }


def model_of(params: Mapping[str, Any], missing: str) -> str:
    """``params["model"]``; :class:`~parley.exceptions.ConfigAssertionError` (an
    ``AssertionError``, as AutoGen's check was) saying ``missing`` when there is none."""
    model = params.get("model")
    if not model:
        raise ConfigAssertionError(missing)
    return str(model)
