"""Registering functions as tools: schemas for the caller's model, wrappers for the executor.

Each agent owns a deep copy of its ``llm_config``, so registering a tool on one agent
never changes another built from the same dict (AutoGen #2239). After a signature change the
agent's client is rebuilt, keeping its usage totals and any registered custom model clients
(AutoGen lost both).
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ..types import FunctionSchema, ToolResultContent, ToolSchema
from ._agent_configs import LLMConfigView, is_function_schema, is_tool_schema
from ._approval import mark as mark_for_approval
from ._journaled import mark_idempotent
from ._messages import sanitize_name
from ._tool_content import image_parts

if TYPE_CHECKING:
    from ._state import AgentCore
    from .conversable_agent import ConversableAgent

__all__ = [
    "build_client",
    "execution_wrapper",
    "mark_idempotent",
    "merge_functions",
    "register_for_execution",
    "register_for_llm",
    "register_function",
    "update_function_signature",
    "update_tool_signature",
]

F = TypeVar("F", bound=Callable[..., Any])


def check_name(name: str | None) -> None:
    if not name or sanitize_name(name) != name or len(name) > 64:
        raise ValueError(
            f"Invalid name: {name}. Only letters, numbers, '_' and '-' are allowed, at most 64 characters."
        )


def _warn_overridden(name: str | None) -> None:
    # A UserWarning with AutoGen's text: AutoGen code checks for it (pytest.warns).
    warnings.warn(f"Function '{name}' is being overridden.", UserWarning, stacklevel=4)


def merge_functions(
    function_map: dict[str, Callable[..., Any]], new: Mapping[str, Callable[..., Any] | None]
) -> None:
    """Merge ``new`` into an agent's function map; a None value removes that name."""
    for name in new:
        check_name(name)
        if name in function_map and new[name] is not None:
            _warn_overridden(name)
    for name, func in new.items():
        if func is None:
            function_map.pop(name, None)
        else:
            function_map[name] = func


def build_client(llm_config: Any, tools_in_requests: bool) -> Any:
    """The agent's ``OpenAIWrapper`` for ``llm_config`` (None without one). An agent whose tools
    are described in its prompt instead (``tools_in_requests`` False: the single-agent loops of
    :mod:`parley.agents`) keeps their schemas in ``llm_config`` but out of every request."""
    if not llm_config:
        return None
    from ..oai import OpenAIWrapper

    config = llm_config if tools_in_requests else LLMConfigView(llm_config).without_tools()
    return OpenAIWrapper(**config)


def _rebuild_client(agent: AgentCore) -> None:
    old = agent.client
    in_requests = agent.state.tools_in_requests
    agent.client = build_client(agent.llm_config, in_requests)
    if old is None or agent.client is None:
        return
    agent.client.total_usage_summary = old.total_usage_summary
    agent.client.actual_usage_summary = old.actual_usage_summary
    agent.client.adopt_model_clients(old)


def _update_signature(
    agent: AgentCore, key: Literal["tools", "functions"], sig: object, is_remove: Any
) -> None:
    # AutoGen's public llm_config dict is changed in place: users and AutoGen code read the
    # schemas there, and the agent's client is rebuilt from it.
    llm_config = agent.llm_config
    if is_remove:
        if not isinstance(llm_config, dict) or key not in llm_config:
            raise AssertionError(f"The agent config doesn't have {key} {sig}.")
        kept = [s for s in llm_config[key] if _schema_name(s, key) != sig]
    else:
        if not isinstance(sig, dict):
            raise ValueError(
                f"The signature must be of the type dict. Received signature type {type(sig)}"
            )
        assert isinstance(llm_config, dict)
        name = _schema_name(sig, key)
        check_name(name)
        kept = [s for s in llm_config.get(key, []) if _schema_name(s, key) != name]
        if len(kept) != len(llm_config.get(key, [])):
            _warn_overridden(name)
        kept.append(sig)
    if kept:
        llm_config[key] = kept
    else:
        llm_config.pop(key, None)
    _rebuild_client(agent)


def _schema_name(schema: object, key: Literal["tools", "functions"]) -> str | None:
    """The function name of an entry of ``tools`` or ``functions`` (None: it names none)."""
    if key == "tools":
        return schema["function"]["name"] if is_tool_schema(schema) else None
    return schema["name"] if is_function_schema(schema) else None


def update_tool_signature(
    agent: AgentCore, tool_sig: str | ToolSchema | dict[str, Any], is_remove: Any
) -> None:
    if not agent.llm_config:
        raise AssertionError("To update a tool signature, agent must have an llm_config")
    _update_signature(agent, "tools", tool_sig, is_remove)


def update_function_signature(
    agent: AgentCore, func_sig: str | FunctionSchema | dict[str, Any], is_remove: Any
) -> None:
    if not isinstance(agent.llm_config, dict):
        raise AssertionError("To update a function signature, agent must have an llm_config")
    _update_signature(agent, "functions", func_sig, is_remove)


def _name_of(func: Any, name: str | None) -> str:
    # AutoGen marks a tool function with its name (func._name) and description.
    if name or not hasattr(func, "_name"):
        func._name = name or func.__name__  # private-ok: AutoGen's marker on a tool function
    return str(func._name)  # private-ok: AutoGen's marker on a tool function


def register_for_llm(
    agent: AgentCore,
    *,
    name: str | None = None,
    description: str | None = None,
    api_style: Literal["function", "tool"] = "tool",
) -> Callable[[F], F]:
    """Decorator: offer the function to this agent's model as a tool (or legacy function),
    its schema put into the agent's llm_config (``ConversableAgent.register_for_llm``)."""

    def decorator(func: F) -> F:
        from ..function_utils import get_function_schema

        tool_name = _name_of(func, name)
        if description:
            func._description = description  # type: ignore[attr-defined]  # private-ok: AutoGen's marker on a tool function
        elif not hasattr(func, "_description"):
            raise ValueError("Function description is required, none found.")
        described = func._description  # type: ignore[attr-defined]  # private-ok: AutoGen's marker on a tool function
        schema = get_function_schema(func, name=tool_name, description=described)
        if agent.llm_config is None:
            raise RuntimeError("LLM config must be setup before registering a function for LLM.")
        if api_style == "tool":
            update_tool_signature(agent, schema, is_remove=False)
        elif api_style == "function":
            update_function_signature(agent, schema["function"], is_remove=False)
        else:
            raise ValueError(f"Unsupported API style: {api_style}")
        return func

    return decorator


def execution_wrapper(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` taking a model's JSON arguments: validated and converted to the annotated types
    (pydantic models included), the result serialised to a string, except a list of content
    parts with images, which is kept as parts (:mod:`._tool_content`). The wrapper is async when
    ``func`` is a coroutine function, and its ``_origin`` is ``func`` (AutoGen's attribute,
    which notebooks check).

    A direct call with positional arguments (Python code, never a model) follows AutoGen's
    rule instead: only keyword arguments annotated with a pydantic model are converted.
    """
    from ..function_utils import load_basemodels_if_needed, serialize_to_str, validate_arguments

    def serialized(result: Any) -> ToolResultContent:
        parts = image_parts(result)
        return serialize_to_str(result) if parts is None else parts

    def direct(*args: Any, **kwargs: Any) -> Any:
        # Built per call: such calls are rare, and registering stays as cheap as it was.
        return load_basemodels_if_needed(func)(*args, **kwargs)

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def a_wrapped(*args: Any, **kwargs: Any) -> ToolResultContent:
            if args:
                return serialized(await direct(*args, **kwargs))
            return serialized(await func(**validate_arguments(func, kwargs)))

        wrapped: Callable[..., Any] = a_wrapped
    else:

        @functools.wraps(func)
        def s_wrapped(*args: Any, **kwargs: Any) -> ToolResultContent:
            if args:
                return serialized(direct(*args, **kwargs))
            return serialized(func(**validate_arguments(func, kwargs)))

        wrapped = s_wrapped
    wrapped._parley_validates = True  # type: ignore[attr-defined]
    wrapped._origin = func  # type: ignore[attr-defined]
    return wrapped


def register_for_execution(
    agent: AgentCore,
    wrap: Callable[[Any], Any],
    name: str | None = None,
    idempotent: bool | None = None,
    requires_approval: bool = False,
) -> Callable[[F], F]:
    """A decorator registering ``func``, wrapped by ``wrap`` (the agent's ``_wrap_function``),
    in the agent's function map; it returns ``func`` itself. ``idempotent=False`` marks a tool
    a resumed durable chat must not rerun by itself (``parley.durable``);
    ``requires_approval=True`` one whose every call the agent's human approves or rejects
    before it runs (``_approval``)."""

    def decorator(func: F) -> F:
        tool_name = _name_of(func, name)
        wrapped = wrap(func)
        if idempotent is not None:
            mark_idempotent(wrapped, idempotent)
        if requires_approval:
            mark_for_approval(wrapped)
        merge_functions(agent.function_map, {tool_name: wrapped})
        return func

    return decorator


def register_function(
    f: Callable[..., Any],
    *,
    caller: ConversableAgent,
    executor: ConversableAgent,
    name: str | None = None,
    description: str,
    idempotent: bool | None = None,
    requires_approval: bool = False,
) -> None:
    """Register ``f`` as a tool the caller's model may call and the executor runs
    (``idempotent``, ``requires_approval``: see :func:`register_for_execution`)."""
    caller.register_for_llm(name=name, description=description)(f)
    executor.register_for_execution(
        name=name, idempotent=idempotent, requires_approval=requires_approval
    )(f)
