"""AutoGen's ``autogen.oai.client_utils``: helpers for writing a model client.

- :func:`validate_parameter` reads one request parameter, falling back to a default (with a
  ``UserWarning`` that says why) when the value has the wrong type, is out of bounds or is not
  one of the allowed values: the check AutoGen's provider clients make of every parameter, for
  a client of your own.
- :func:`should_hide_tools` answers AutoGen's ``hide_tools`` option, the way parley's own
  provider clients do (one implementation, in :mod:`parley.oai.providers`).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from .providers._messages import tools_hidden

__all__ = ["logger_formatter", "should_hide_tools", "validate_parameter"]

# The record format AutoGen's provider modules give their log handlers.
logger_formatter = logging.Formatter(
    "[%(name)s: %(asctime)s] {%(lineno)d} %(levelname)s - %(message)s", "%m-%d %H:%M:%S"
)


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


def should_hide_tools(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None,
    hide_tools_param: str,
) -> bool:
    """Whether a request should leave its ``tools`` out, by AutoGen's ``hide_tools`` option:
    ``"if_any_run"`` once any tool result is in ``messages``, ``"if_all_run"`` once every tool
    has a result, ``"never"`` never. Another value raises
    :class:`~parley.exceptions.ConfigOptionError` (a ``TypeError`` as in AutoGen, and a
    ``ValueError``)."""
    names = [tool["function"]["name"] for tool in tools or ()]
    return tools_hidden(messages, names, hide_tools_param)
