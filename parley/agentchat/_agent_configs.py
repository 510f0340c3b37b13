"""The two configs an agent is built with, checked as AutoGen checks them, and the typed view
of an agent's ``llm_config`` the steps of a turn read.

``agent.llm_config`` stays AutoGen's plain dict: users and AutoGen code read it, change it in
place (``update_tool_signature`` must, as in AutoGen) and assign a new one. So parley does not
keep a copy that a change would leave stale: :class:`LLMConfigView` reads through to the dict
it is given, and a reader makes one over ``agent.llm_config`` as it is when it reads (a
one-slot object; each property is a dict lookup or two, as the raw ``.get`` it replaces).
The entries' own settings are checked and typed by the agent's client
(:class:`parley.oai._config.Entry`).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping
from typing import Any, Literal, TypeGuard

from ..types import FunctionSchema, ToolSchema

__all__ = [
    "LLMConfigView",
    "check_code_execution_config",
    "copy_llm_config",
    "is_function_schema",
    "is_tool_schema",
]

# The keys that describe tools to a model's tool-calling API.
TOOL_KEYS = ("tools", "functions")
_EMPTY: Mapping[str, Any] = {}

_EMPTY_LLM_CONFIGS: tuple[dict[str, Any], ...] = (
    {},
    {"config_list": []},
    {"config_list": [{"model": ""}]},
)


def check_code_execution_config(config: Any) -> dict[str, Any] | Literal[False]:
    """A copy of ``code_execution_config`` (``{}`` for the deprecated ``None``), or False."""
    if config is None:
        warnings.warn(
            "Using None to signal a default code_execution_config is deprecated. "
            "Use {} to use default or False to disable code execution.",
            stacklevel=3,  # the agent's constructor's caller
        )
        return {}
    if config is False:
        return False
    if not isinstance(config, dict):
        raise ValueError("code_execution_config must be a dict or False.")
    return dict(config)


def copy_llm_config(llm_config: Any) -> dict[str, Any] | Literal[False]:
    """A deep copy of ``llm_config`` (a dict), or False; the caller's dict is never changed."""
    assert llm_config is False or isinstance(llm_config, dict), (
        "llm_config must be a dict or False or None."
    )
    if llm_config is False:
        return False
    try:
        copied: dict[str, Any] = copy.deepcopy(llm_config)
    except TypeError as e:
        raise TypeError(
            "Please implement __deepcopy__ method for each value class in llm_config to "
            "support deepcopy (e.g. a custom http_client)."
        ) from e
    if copied in _EMPTY_LLM_CONFIGS:
        raise ValueError(
            "When using OpenAI or Azure OpenAI endpoints, specify a non-empty 'model' either "
            "in 'llm_config' or in each config of 'config_list'."
        )
    return copied


def is_function_schema(schema: object) -> TypeGuard[FunctionSchema]:
    """Whether ``schema`` describes a function (a dict with a ``name``)."""
    return isinstance(schema, dict) and isinstance(schema.get("name"), str)


def is_tool_schema(schema: object) -> TypeGuard[ToolSchema]:
    """Whether ``schema`` is a ``tools`` entry describing a function."""
    return isinstance(schema, dict) and is_function_schema(schema.get("function"))


class LLMConfigView:
    """A typed, read-only view of an ``llm_config`` dict (False or None: an agent without a
    model), reading the dict as it is at each access."""

    __slots__ = ("_config",)

    def __init__(self, llm_config: object) -> None:
        self._config: Mapping[str, Any] = llm_config if isinstance(llm_config, Mapping) else _EMPTY

    @property
    def allow_format_str_template(self) -> bool:
        """Whether string contents are ``str.format``-ted with a message's context."""
        return bool(self._config.get("allow_format_str_template"))

    @property
    def tools(self) -> list[ToolSchema]:
        """The well-formed entries of ``tools`` (a malformed one is left to the model's API)."""
        return [t for t in self._config.get("tools") or () if is_tool_schema(t)]

    @property
    def functions(self) -> list[FunctionSchema]:
        """The well-formed entries of the legacy ``functions``."""
        return [f for f in self._config.get("functions") or () if is_function_schema(f)]

    @property
    def described_functions(self) -> list[FunctionSchema]:
        """Every function the config describes to the model: those of ``tools``, then
        ``functions``."""
        return [t["function"] for t in self.tools] + self.functions

    @property
    def has_tools(self) -> bool:
        """Whether the config describes tools or functions to the model (any entry)."""
        return any(self._config.get(key) for key in TOOL_KEYS)

    @property
    def model(self) -> str | None:
        """The model of the first config entry (of the config itself without a list)."""
        entries = self._config.get("config_list") or [self._config]
        model = entries[0].get("model") if isinstance(entries[0], Mapping) else None
        return model if isinstance(model, str) and model else None

    def without_tools(self) -> dict[str, Any]:
        """A shallow copy of the config without its tool and function schemas."""
        return {k: v for k, v in self._config.items() if k not in TOOL_KEYS}
