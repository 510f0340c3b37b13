"""Registration methods of ``ConversableAgent``: reply functions, hooks, functions and tools,
model clients and the human-review hook (spec 2.4, 2.14, 2.16)."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from . import _human, _tools
from ._registry import HookLists, ReplyEntry, check_trigger_type

if TYPE_CHECKING:
    from .conversable_agent import ConversableAgent

__all__ = ["AgentRegistrationMixin"]

logger = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])


class AgentRegistrationMixin:
    """Part of ConversableAgent: what can be registered on an agent."""

    _reply_func_list: list[ReplyEntry]
    _hooks: HookLists
    _human_review: Callable[[_human.ReviewRequest], Any] | None
    _function_map: dict[str, Callable[..., Any]]
    client: Any
    llm_config: Any

    @property
    def _agent(self) -> ConversableAgent:
        return cast("ConversableAgent", self)

    # -- registration ---------------------------------------------------------------------

    def register_reply(
        self,
        trigger: Any,
        reply_func: Callable[..., Any],
        position: int = 0,
        config: Any = None,
        reset_config: Callable[[Any], None] | None = None,
        *,
        ignore_async_in_sync_chat: bool = False,
        remove_other_reply_funcs: bool = False,
    ) -> None:
        """Add a reply function; ``position`` 0 (the default) is tried first. Sync and async
        functions both run in sync and async chats."""
        check_trigger_type(trigger)
        if remove_other_reply_funcs:
            self._reply_func_list.clear()
        entry = ReplyEntry(
            trigger,
            reply_func,
            reply_func,
            config=copy.copy(config),
            init_config=config,
            reset_config=reset_config,
            ignore_async_in_sync_chat=ignore_async_in_sync_chat,
        )
        self._reply_func_list.insert(self._reply_index(position), entry)

    def _reply_index(self, position: int) -> int:
        """The list index for AutoGen's ``position``, in which each built-in counts twice: the
        default 2 of nested chats still means "right after the termination check"."""
        taken = 0
        for i, entry in enumerate(self._reply_func_list):
            if taken >= position:
                return i
            taken += entry.slots
        return len(self._reply_func_list)

    def replace_reply_func(
        self, old_reply_func: Callable[..., Any], new_reply_func: Callable[..., Any]
    ) -> None:
        for entry in self._reply_func_list:
            if entry.matches_func(old_reply_func):
                entry.func = entry.impl = new_reply_func
                entry.builtin = False

    def register_hook(self, hookable_method: str, hook: Callable[..., Any]) -> None:
        """Add a hook; sync and async hooks run under either twin name, in both kinds of chat."""
        self._hooks.add(hookable_method, hook)

    def register_human_review(self, review: Callable[[_human.ReviewRequest], Any] | None) -> None:
        """Let ``review(request)`` answer for this agent's human (None removes it); see
        :class:`parley.agentchat.ReviewRequest`. Answers are recorded like typed input."""
        self._human_review = review

    def register_model_client(self, model_client_cls: type, **kwargs: Any) -> None:
        self.client.register_model_client(model_client_cls, **kwargs)

    def register_function(self, function_map: Mapping[str, Callable[..., Any] | None]) -> None:
        """Merge functions into the function map; a None value removes that name."""
        for name in function_map:
            _tools.check_name(name)
            if name in self._function_map and function_map[name] is not None:
                logger.warning("Function '%s' is being overridden.", name)
        for name, func in function_map.items():
            if func is None:
                self._function_map.pop(name, None)
            else:
                self._function_map[name] = func

    def register_for_llm(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        api_style: Literal["function", "tool"] = "tool",
    ) -> Callable[[F], F]:
        """Decorator: offer the function to this agent's model as a tool (or legacy function)."""
        return _tools.register_for_llm(
            self._agent, name=name, description=description, api_style=api_style
        )

    def register_for_execution(self, name: str | None = None) -> Callable[[F], F]:
        """Decorator: let this agent execute the function when a model calls it."""
        return _tools.register_for_execution(self._agent, name=name)

    def update_tool_signature(self, tool_sig: str | dict[str, Any], is_remove: Any) -> None:
        _tools.update_tool_signature(self._agent, tool_sig, is_remove)

    def update_function_signature(self, func_sig: str | dict[str, Any], is_remove: Any) -> None:
        _tools.update_function_signature(self._agent, func_sig, is_remove)

    def can_execute_function(self, name: list[str] | str) -> bool:
        names = name if isinstance(name, list) else [name]
        return all(n in self._function_map for n in names)
