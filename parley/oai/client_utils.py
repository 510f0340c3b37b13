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
from collections.abc import Mapping, Sequence
from typing import Any

from .providers._messages import tools_hidden
from .providers._params import validate_parameter as validate_parameter

__all__ = ["logger_formatter", "should_hide_tools", "validate_parameter"]

# The record format AutoGen's provider modules give their log handlers.
logger_formatter = logging.Formatter(
    "[%(name)s: %(asctime)s] {%(lineno)d} %(levelname)s - %(message)s", "%m-%d %H:%M:%S"
)


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
