"""What ``ConversableAgent`` registers (reply functions, hooks, the human's review function,
model clients, tools) and the chats it starts from a queue (``initiate_chats``, nested chats):
two mixins of its class, kept apart from the conversation itself
(``conversable_agent.py``). The work is in ``_registry``, ``_tools``, ``_queue`` and
``_nested``; these are the AutoGen-named faces."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from . import _human, _nested, _queue, _tools
from ._registry import HookLists, ReplyEntry, check_trigger_type, insert_reply
from ._sync_chat import run_sync

if TYPE_CHECKING:
    from ._chat_result import ChatResult
    from ._state import AgentCore, AgentState

__all__ = ["ChatQueues", "Registration", "reply_configs"]

F = TypeVar("F", bound=Callable[..., Any])


def reply_configs(agent: Registration) -> list[Any]:
    """The ``config`` of each reply function ``agent`` has, in order: how AutoGen's
    SocietyOfMindAgent finds the GroupChat a manager runs."""
    return [entry.config for entry in agent._reply_func_list]


class Registration:
    """Registering reply functions, hooks, a review function, model clients and tools."""

    # Set by ConversableAgent.__init__.
    _reply_func_list: list[ReplyEntry]
    _hooks: HookLists
    _function_map: dict[str, Callable[..., Any]]
    state: AgentState
    client: Any

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
        insert_reply(self._reply_func_list, entry, position)

    def replace_reply_func(
        self, old_reply_func: Callable[..., Any], new_reply_func: Callable[..., Any]
    ) -> None:
        for entry in self._reply_func_list:
            if entry.matches_func(old_reply_func):
                entry.replace(new_reply_func)

    def register_hook(self, hookable_method: str, hook: Callable[..., Any]) -> None:
        """Add a hook; sync and async hooks run under either twin name, in both kinds of chat."""
        self._hooks.add(hookable_method, hook)

    def register_human_review(self, review: Callable[[_human.ReviewRequest], Any] | None) -> None:
        """Let ``review(request)`` answer for this agent's human (None removes it); see
        :class:`parley.agentchat.ReviewRequest`. Answers are recorded like typed input."""
        self.state.human_review = review

    def register_model_client(self, model_client_cls: type, **kwargs: Any) -> None:
        self.client.register_model_client(model_client_cls, **kwargs)

    def register_function(self, function_map: Mapping[str, Callable[..., Any] | None]) -> None:
        """Merge functions into the function map; a None value removes that name."""
        _tools.merge_functions(self._function_map, function_map)

    register_for_llm = _tools.register_for_llm

    def register_for_execution(
        self: AgentCore,
        name: str | None = None,
        idempotent: bool | None = None,
        requires_approval: bool = False,
    ) -> Callable[[F], F]:
        """Decorator: let this agent execute the function when a model calls it
        (``idempotent=False``: a resumed durable chat asks before running it again;
        ``requires_approval=True``: this agent's human approves or rejects each call before
        it runs)."""
        return _tools.register_for_execution(
            self,
            self._wrap_function,
            name=name,
            idempotent=idempotent,
            requires_approval=requires_approval,
        )

    def update_tool_signature(
        self: AgentCore, tool_sig: str | dict[str, Any], is_remove: Any
    ) -> None:
        _tools.update_tool_signature(self, tool_sig, is_remove)

    def update_function_signature(
        self: AgentCore, func_sig: str | dict[str, Any], is_remove: Any
    ) -> None:
        _tools.update_function_signature(self, func_sig, is_remove)

    def can_execute_function(self, name: list[str] | str) -> bool:
        names = name if isinstance(name, list) else [name]
        return all(n in self._function_map for n in names)


class ChatQueues:
    """Chat queues (``initiate_chats``) and nested chats, with this agent as the sender."""

    _finished_chats: Any

    def initiate_chats(
        self, chat_queue: list[dict[str, Any]], *, store: Any = None, chat_id: str | None = None
    ) -> list[ChatResult]:
        """Run the queued chats in order, as the sender of entries without one (the caller's
        dicts are not modified); the results are kept for ``get_chat_results``. ``store`` and
        ``chat_id`` make the queue durable (``parley.durable``)."""
        results = run_sync(_queue.run_sequential(chat_queue, self, store=store, chat_id=chat_id))
        self._finished_chats = results
        return results

    async def a_initiate_chats(
        self, chat_queue: list[dict[str, Any]], *, store: Any = None, chat_id: str | None = None
    ) -> dict[Any, ChatResult]:
        """Run the queued chats concurrently, by ``prerequisites``; ``{chat_id: result}``."""
        results = await _queue.run_concurrent(chat_queue, self, store=store, chat_id=chat_id)
        self._finished_chats = results
        return results

    def get_chat_results(self, chat_index: int | None = None) -> Any:
        """The results of the last ``initiate_chats`` (or one of them)."""
        return self._finished_chats if chat_index is None else self._finished_chats[chat_index]

    def register_nested_chats(
        self: AgentCore,
        chat_queue: list[dict[str, Any]],
        trigger: Any,
        reply_func_from_nested_chats: str | Callable[..., Any] = "summary_from_nested_chats",
        position: int = 2,
        use_async: bool | None = None,
        **kwargs: Any,
    ) -> None:
        """Answer messages from ``trigger`` by running ``chat_queue`` and replying with the
        last chat's summary; ``position`` counts as in AutoGen (2: after the termination check)."""
        _nested.register_nested_chats(
            self, chat_queue, trigger, reply_func_from_nested_chats, position, use_async, **kwargs
        )

    _get_chats_to_run = staticmethod(_nested.get_chats_to_run)
    _summary_from_nested_chats = staticmethod(_nested.summary_from_nested_chats_sync)
    _a_summary_from_nested_chats = staticmethod(_nested.a_summary_from_nested_chats)
