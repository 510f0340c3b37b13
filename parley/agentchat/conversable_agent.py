"""``ConversableAgent``: state and wiring (AutoGen's ``autogen.agentchat.conversable_agent``).

The agent keeps histories, counters and its registries; the steps of a turn live in small
modules beside this one (``_human``, ``_replies``, ``_chat_flow``, ``_delivery``). Every step
is written once, as a coroutine; each sync method runs its async twin through
``parley._sync.run_sync`` (which also works inside a running loop, e.g. in Jupyter).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from .._calls import is_async_callable
from ..code_utils import content_str
from ..oai._streaming import echo_silenced
from . import _chat_flow, _code_execution, _human, _nested, _queue, _replies, _tools
from ._agent_configs import check_code_execution_config, copy_llm_config
from ._agent_registration import AgentRegistrationMixin
from ._agent_state import AgentStateMixin
from ._delivery import dispatch, no_driver, send_reply
from ._messages import check_message, normalize, render_message
from ._registry import HookLists, ReplyEntry, match_trigger
from ._sync_chat import in_sync_chat, reply_twins, run_sync
from .agent import Agent, LLMAgent
from .chat import ChatResult

__all__ = ["ConversableAgent", "register_function"]

register_function = _tools.register_function
F = TypeVar("F", bound=Callable[..., Any])

logger = logging.getLogger(__name__)


def _default_termination(message: dict[str, Any]) -> bool:
    return content_str(message.get("content")) == "TERMINATE"


class ConversableAgent(AgentRegistrationMixin, AgentStateMixin, LLMAgent):
    """An agent that converses: it sends, receives and generates replies (spec section 2)."""

    DEFAULT_CONFIG: Any = False
    MAX_CONSECUTIVE_AUTO_REPLY = 100
    DEFAULT_SUMMARY_PROMPT = (
        "Summarize the takeaway from the conversation. Do not add any introductory phrases."
    )
    DEFAULT_SUMMARY_METHOD = "last_msg"
    llm_config: dict[str, Any] | Literal[False]

    def __init__(
        self,
        name: str,
        system_message: str | list[Any] | None = "You are a helpful AI Assistant.",
        is_termination_msg: Callable[[dict[str, Any]], bool] | None = None,
        max_consecutive_auto_reply: int | None = None,
        human_input_mode: Literal["ALWAYS", "NEVER", "TERMINATE"] = "TERMINATE",
        function_map: dict[str, Callable[..., Any]] | None = None,
        code_execution_config: dict[str, Any] | Literal[False] = False,
        llm_config: dict[str, Any] | Literal[False] | None = None,
        default_auto_reply: str | dict[str, Any] | None = "",
        description: str | None = None,
        chat_messages: dict[Agent, list[dict[str, Any]]] | None = None,
        silent: bool | None = None,
    ) -> None:
        self._code_execution_config = check_code_execution_config(code_execution_config)
        self._name = name
        self._oai_messages: dict[Any, list[dict[str, Any]]] = (
            defaultdict(list) if chat_messages is None else chat_messages
        )
        self._oai_system_message = [{"content": system_message, "role": "system"}]
        self._description = description if description is not None else system_message
        self._is_termination_msg = is_termination_msg or _default_termination
        self.silent = silent
        self._init_llm(llm_config)
        self.client_cache: Any = None
        self.previous_cache: Any = None
        self.human_input_mode = human_input_mode
        self._max_consecutive_auto_reply = (
            max_consecutive_auto_reply
            if max_consecutive_auto_reply is not None
            else self.MAX_CONSECUTIVE_AUTO_REPLY
        )
        self._consecutive_auto_reply_counter: dict[Any, int] = defaultdict(int)
        self._max_consecutive_auto_reply_dict: dict[Any, int] = defaultdict(
            self.max_consecutive_auto_reply
        )
        self._function_map: dict[str, Callable[..., Any]] = {}
        if function_map:
            self.register_function(function_map)
        self._default_auto_reply = default_auto_reply
        self._reply_func_list: list[ReplyEntry] = []
        self._human_input: list[str] = []
        self._human_review: Callable[[_human.ReviewRequest], Any] | None = None
        self.reply_at_receive: dict[Any, bool] = defaultdict(bool)
        self.code_executor: Any = None
        self.use_docker: Any = None
        for func, impl in reversed(self._builtin_replies()):
            self._reply_func_list.insert(
                0, ReplyEntry([Agent, None], func, impl, builtin=True, slots=2)
            )
        self.hook_lists = HookLists().lists
        self._hooks = HookLists(self.hook_lists)

    # -- construction helpers -------------------------------------------------------------

    def _init_llm(self, llm_config: Any) -> None:
        self.llm_config = copy_llm_config(self.DEFAULT_CONFIG if llm_config is None else llm_config)
        self.client: Any = None
        if self.llm_config is not False:
            from ..oai import OpenAIWrapper

            self.client = OpenAIWrapper(**self.llm_config)

    def _builtin_replies(self) -> list[tuple[Callable[..., Any], Callable[..., Any]]]:
        """(public method, implementation) of each built-in reply, first tried first."""
        cls = ConversableAgent
        replies = [
            (cls.check_termination_and_human_reply, _human.check_termination_and_human_reply),
            (cls.generate_function_call_reply, _replies.generate_function_call_reply),
            (cls.generate_tool_calls_reply, _replies.generate_tool_calls_reply),
        ]
        if self._code_execution_config is not False:
            impl = _code_execution.setup_code_execution(self, self._code_execution_config)
            if impl is _code_execution.generate_code_execution_reply:
                replies.append((cls.generate_code_execution_reply, impl))
            else:
                replies.append((cls._generate_code_execution_reply_using_executor, impl))
        replies.append((cls.generate_oai_reply, _replies.generate_oai_reply))
        return replies

    # -- properties -----------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description  # type: ignore[return-value]

    @description.setter
    def description(self, description: str) -> None:
        self._description = description

    @property
    def system_message(self) -> str:
        return self._oai_system_message[0]["content"]  # type: ignore[return-value]

    def update_system_message(self, system_message: str) -> None:
        self._oai_system_message[0]["content"] = system_message

    @property
    def chat_messages(self) -> dict[Any, list[dict[str, Any]]]:
        return self._oai_messages

    @property
    def function_map(self) -> dict[str, Callable[..., Any]]:
        return self._function_map

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self._name!r})"

    # -- send / receive / reply: the async core --------------------------------------------

    def _effective_silent(self, sender: Any, silent: bool | None) -> bool:
        agent_level = getattr(sender, "silent", None)
        return bool(agent_level if agent_level is not None else silent)

    def _store(
        self, message: Any, partner: Any, *, sending: bool, checked: bool = False
    ) -> dict[str, Any]:
        partner_name = getattr(partner, "name", "")
        stored = normalize(
            message,
            sending=sending,
            own_name=self._name,
            partner_name=partner_name,
            checked=checked,
        )
        self._oai_messages[partner].append(stored)
        return stored

    async def a_send(
        self,
        message: dict[str, Any] | str,
        recipient: Agent,
        request_reply: bool | None = None,
        silent: bool | None = False,
    ) -> None:
        quiet = self._effective_silent(self, silent)
        if self._hooks.at("process_message_before_send"):
            with no_driver():
                message = await self._hooks.run(
                    "process_message_before_send",
                    sender=self,
                    message=message,
                    recipient=recipient,
                    silent=quiet,
                )
        # Checked once here, so that a message no request could carry is refused before either
        # side stores it, and a repaired one is what the recipient gets (one warning, not two).
        message = check_message(
            message, sending=True, own_name=self._name, partner_name=getattr(recipient, "name", "")
        )
        self._store(message, recipient, sending=True, checked=True)
        await dispatch(recipient, "receive", message, self, request_reply, silent)

    async def a_receive(
        self,
        message: dict[str, Any] | str,
        sender: Agent,
        request_reply: bool | None = None,
        silent: bool | None = False,
    ) -> None:
        stored = self._store(message, sender, sending=False)
        if not self._effective_silent(sender, silent):
            from ..io import IOStream

            allow = bool(self.llm_config and self.llm_config.get("allow_format_str_template"))
            IOStream.get_default().print(
                render_message(stored, sender.name, self._name, allow_format=allow), flush=True
            )
        if request_reply is False or (request_reply is None and not self.reply_at_receive[sender]):
            return
        # The reply is printed (when this agent sends it) as this silence says: so is its stream.
        with echo_silenced(self._effective_silent(self, silent)):
            reply = await dispatch(
                self, "generate_reply", messages=self._oai_messages[sender], sender=sender
            )
        if reply is not None:
            await send_reply(self, reply, sender, silent)

    async def a_generate_reply(
        self,
        messages: list[dict[str, Any]] | None = None,
        sender: Agent | None = None,
        **kwargs: Any,
    ) -> str | dict[str, Any] | None:
        if messages is None and sender is None:
            raise AssertionError("Either messages or sender must be provided.")
        if messages is None:
            messages = self._oai_messages[sender]
        exclude = kwargs.get("exclude") or ()
        sync_chat = in_sync_chat()
        with no_driver():
            messages = await self._run_received_hooks(messages)
            for entry in list(self._reply_func_list):
                if any(entry.matches_func(f) for f in exclude):
                    continue
                if sync_chat and entry.ignore_async_in_sync_chat and is_async_callable(entry.impl):
                    continue
                if not match_trigger(entry.trigger, sender):
                    continue
                final, reply = await entry.run(self, messages, sender)
                if final:
                    return reply  # type: ignore[no-any-return]
        return self._default_auto_reply

    async def _run_received_hooks(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self._hooks.at("process_last_received_message") and messages:
            last = messages[-1]
            content = last.get("content")
            hookable = not (last.get("function_call") or last.get("context"))
            if hookable and isinstance(content, (str, list)) and content != "exit":
                new = await self._hooks.run("process_last_received_message", content)
                if new != content:
                    # A copy: hooks change what the model sees, not the stored history.
                    messages = [*messages[:-1], {**last, "content": new}]
        if self._hooks.at("process_all_messages_before_reply"):
            messages = await self._hooks.run("process_all_messages_before_reply", messages)
        return messages

    # -- the sync twins ---------------------------------------------------------------------

    def send(
        self,
        message: dict[str, Any] | str,
        recipient: Agent,
        request_reply: bool | None = None,
        silent: bool | None = False,
    ) -> None:
        run_sync(self.a_send(message, recipient, request_reply, silent))

    def receive(
        self,
        message: dict[str, Any] | str,
        sender: Agent,
        request_reply: bool | None = None,
        silent: bool | None = False,
    ) -> None:
        run_sync(self.a_receive(message, sender, request_reply, silent))

    def generate_reply(
        self,
        messages: list[dict[str, Any]] | None = None,
        sender: Agent | None = None,
        **kwargs: Any,
    ) -> str | dict[str, Any] | None:
        return run_sync(self.a_generate_reply(messages, sender, **kwargs))

    # -- built-in reply functions (public, as in AutoGen) ---------------------------------------

    check_termination_and_human_reply, a_check_termination_and_human_reply = reply_twins(
        _human.check_termination_and_human_reply
    )
    generate_oai_reply, a_generate_oai_reply = reply_twins(_replies.generate_oai_reply)
    generate_tool_calls_reply, a_generate_tool_calls_reply = reply_twins(
        _replies.generate_tool_calls_reply
    )
    generate_function_call_reply, a_generate_function_call_reply = reply_twins(
        _replies.generate_function_call_reply
    )

    generate_code_execution_reply, a_generate_code_execution_reply = reply_twins(
        _code_execution.generate_code_execution_reply
    )
    _generate_code_execution_reply_using_executor = reply_twins(
        _code_execution.generate_code_execution_reply_using_executor
    )[0]

    def execute_code_blocks(self, code_blocks: list[tuple[str, str]]) -> tuple[int, str]:
        """Run (language, code) blocks in order; (last exit code, all logs). Legacy form."""
        return _code_execution.execute_code_blocks(self, code_blocks)

    def run_code(self, code: str, **kwargs: Any) -> tuple[int, str, str | None]:
        """Run one block; override to run code your own way. Legacy form."""
        from ..code_utils import execute_code

        return execute_code(code, **kwargs)

    def execute_function(
        self, func_call: dict[str, Any], verbose: bool = False
    ) -> tuple[bool, dict[str, Any]]:
        return run_sync(_replies.execute_function(self, func_call, verbose=verbose))

    async def a_execute_function(self, func_call: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        return await _replies.execute_function(self, func_call)

    # -- chats ----------------------------------------------------------------------------------

    def _prepare_chat(
        self,
        recipient: Any,
        clear_history: bool,
        prepare_recipient: bool = True,
        reply_at_receive: bool = True,
    ) -> None:
        self.reset_consecutive_auto_reply_counter(recipient)
        self.reply_at_receive[recipient] = reply_at_receive
        if clear_history:
            self.clear_history(recipient)
            self._human_input = []
        if prepare_recipient:
            recipient._prepare_chat(self, clear_history, False, reply_at_receive)

    async def a_generate_init_message(
        self, message: dict[str, Any] | str | None, **kwargs: Any
    ) -> str | dict[str, Any]:
        if message is None:
            message = await _human.ask_human(self, ">", {}, None)
        return _chat_flow.apply_carryover(message, kwargs.get("carryover"))  # type: ignore[no-any-return]

    def generate_init_message(
        self, message: dict[str, Any] | str | None, **kwargs: Any
    ) -> str | dict[str, Any]:
        return run_sync(self.a_generate_init_message(message, **kwargs))

    async def a_initiate_chat(
        self,
        recipient: ConversableAgent,
        clear_history: bool = True,
        silent: bool | None = False,
        cache: Any = None,
        max_turns: int | None = None,
        summary_method: str | Callable[..., Any] | None = DEFAULT_SUMMARY_METHOD,
        summary_args: dict[str, Any] | None = None,
        message: dict[str, Any] | str | Callable[..., Any] | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Start a chat with ``recipient`` and run it to its end (spec 2.7)."""
        return await _chat_flow.initiate_chat(
            self,
            recipient,
            clear_history,
            silent,
            cache,
            max_turns,
            summary_method,
            summary_args,
            message,
            kwargs,
        )

    async def _first_message(self, message: Any, recipient: Any, kwargs: dict[str, Any]) -> Any:
        if callable(message):
            from .._calls import call_user

            return await call_user(message, self, recipient, kwargs)
        return await self.a_generate_init_message(message, **kwargs)

    def initiate_chat(
        self,
        recipient: ConversableAgent,
        clear_history: bool = True,
        silent: bool | None = False,
        cache: Any = None,
        max_turns: int | None = None,
        summary_method: str | Callable[..., Any] | None = DEFAULT_SUMMARY_METHOD,
        summary_args: dict[str, Any] | None = None,
        message: dict[str, Any] | str | Callable[..., Any] | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Start a chat with ``recipient`` and run it to its end (spec 2.7)."""
        return run_sync(
            self.a_initiate_chat(
                recipient,
                clear_history,
                silent,
                cache,
                max_turns,
                summary_method,
                summary_args,
                message,
                **kwargs,
            )
        )

    # -- chat queues and nested chats (spec 2.10; the work is in _queue and _nested) ---------------

    def initiate_chats(self, chat_queue: list[dict[str, Any]]) -> list[ChatResult]:
        """Run the queued chats in order, as the sender of entries without one (the caller's
        dicts are not modified); the results are kept for ``get_chat_results``."""
        results = run_sync(_queue.run_sequential(chat_queue, self))
        self._finished_chats: Any = results
        return results

    async def a_initiate_chats(self, chat_queue: list[dict[str, Any]]) -> dict[Any, ChatResult]:
        """Run the queued chats concurrently, by ``prerequisites``; ``{chat_id: result}``."""
        results = await _queue.run_concurrent(chat_queue, self)
        self._finished_chats = results
        return results

    def get_chat_results(self, chat_index: int | None = None) -> Any:
        """The results of the last ``initiate_chats`` (or one of them)."""
        return self._finished_chats if chat_index is None else self._finished_chats[chat_index]

    def register_nested_chats(
        self,
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
