"""The two configs an agent is built with, checked as AutoGen checks them."""

from __future__ import annotations

import copy
import warnings
from typing import Any, Literal

__all__ = ["check_code_execution_config", "copy_llm_config"]

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
