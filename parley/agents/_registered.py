"""The functions registered on an agent, as the loops describe them in their prompts.

``register_for_llm`` leaves a function's schema in ``llm_config`` ("tools" or the legacy
"functions"), ``register_for_execution`` / ``function_map`` leave the callable in the function
map; a loop agent needs both halves together, and a description for a function given only in
the function map (its docstring's first paragraph).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..agentchat._agent_configs import LLMConfigView

__all__ = ["RegisteredFunction", "first_paragraph", "registered_functions"]


@dataclass(frozen=True)
class RegisteredFunction:
    """A registered function: its schema's description and parameters (empty when it has no
    schema), and the callable (None when it was registered only for the model)."""

    name: str
    description: str
    func: Callable[..., Any] | None
    parameters: Mapping[str, Any] = field(default_factory=dict)


def first_paragraph(func: Callable[..., Any]) -> str:
    """The first paragraph of ``func``'s description or docstring (of the function a
    ``register_for_execution`` wrapper wraps)."""
    target = getattr(func, "_origin", func)
    text = getattr(target, "_description", None) or inspect.getdoc(target) or ""
    return str(text).strip().split("\n\n")[0]


def registered_functions(
    llm_config: Mapping[str, Any] | bool | None, function_map: Mapping[str, Callable[..., Any]]
) -> dict[str, RegisteredFunction]:
    """By name: the functions with a schema in ``llm_config``, in its order, then those only in
    ``function_map``."""
    found: dict[str, RegisteredFunction] = {}
    for schema in LLMConfigView(llm_config).described_functions:
        name = schema["name"]
        if name:
            found[name] = RegisteredFunction(
                name,
                str(schema.get("description") or ""),
                function_map.get(name),
                schema.get("parameters") or {},
            )
    for name, func in function_map.items():
        if name not in found:
            found[name] = RegisteredFunction(name, first_paragraph(func), func)
    return found
