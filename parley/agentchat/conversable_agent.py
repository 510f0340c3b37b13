"""``ConversableAgent`` (AutoGen's ``autogen.agentchat.conversable_agent``).

The class is the agent's public face; its conversation state and the settings its steps read
are one :class:`AgentState` (``agent.state``, see ``_state``). The turn reads top to bottom in
``_turn``: ``a_send`` (``_turn.send``) stores and delivers the message, the recipient's
``a_receive`` (``_turn.receive``) stores and prints it and asks ``a_generate_reply``
(``_turn.reply``), which walks the reply-function list (``_registry``); the built-in reply
functions live in ``_human`` (termination and human input), ``_replies`` (tools, functions, the
model) and ``_code_execution``. The agent hands the turn what it walks and the AutoGen helpers
its class overrides (decided once per class by ``_overrides``); other agents' steps are reached
through ``_delivery``, which also honours subclasses that override only a sync step. Every step
is written once, as a coroutine; each sync method is its ``sync_face`` (``_sync_chat``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, ClassVar, Literal, cast

from .._core import reports as _reports
from .._core.runtime import to_thread
from ..code_utils import content_str
from . import (
    _chat_flow,
    _code_execution,
    _human,
    _overrides,
    _replies,
    _summary,
    _tools,
    _turn,
)
from . import _compat_internals as _compat
from ._agent_configs import check_code_execution_config, copy_llm_config
from ._agent_registration import ChatQueues, Registration
from ._chat_result import ChatResult
from ._registry import (
    HookLists,
    ReplyEntry,
    builtin_reply,
    match_trigger,
)
from ._runs import RunMethods
from ._state import AgentState, StateView, as_dict, as_dicts, as_messages
from ._sync_chat import run_sync, sync_face
from ._typed_messages import agent_schema, last_parsed
from .agent import Agent, LLMAgent

__all__ = ["ConversableAgent", "register_function"]

register_function = _tools.register_function

logger = logging.getLogger(__name__)


def _default_termination(message: dict[str, Any]) -> bool:
    return content_str(message.get("content")) == "TERMINATE"


class ConversableAgent(Registration, ChatQueues, RunMethods, LLMAgent):
    """An agent that converses: it sends, receives and generates replies."""

    DEFAULT_CONFIG: Any = False
    MAX_CONSECUTIVE_AUTO_REPLY = 100
    DEFAULT_SUMMARY_PROMPT = _summary.DEFAULT_SUMMARY_PROMPT
    DEFAULT_SUMMARY_METHOD = "last_msg"
    llm_config: dict[str, Any] | Literal[False]
    # Whether the tool schemas in llm_config go into each request (the tool-calling API); the
    # loops of parley.agents describe their tools in the prompt instead.
    _tools_in_requests: ClassVar[bool] = True

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
        self.state = AgentState(
            chat_messages,
            max_consecutive_auto_reply
            if max_consecutive_auto_reply is not None
            else self.MAX_CONSECUTIVE_AUTO_REPLY,
            self.max_consecutive_auto_reply,
        )
        self.state.tools_in_requests = self._tools_in_requests
        self._code_execution_config = check_code_execution_config(code_execution_config)
        self._name = name
        self._oai_system_message = [{"content": system_message, "role": "system"}]
        self._description = description if description is not None else system_message
        self._is_termination_msg = is_termination_msg or _default_termination
        self.silent = silent
        self._init_llm(llm_config)
        self.client_cache: Any = None
        self.previous_cache: Any = None
        self.human_input_mode = human_input_mode
        self._function_map: dict[str, Callable[..., Any]] = {}
        if function_map:
            self.register_function(function_map)
        self._default_auto_reply = default_auto_reply
        self.code_executor: Any = None
        self.use_docker: Any = None
        self._reply_func_list: list[ReplyEntry] = [
            builtin_reply([Agent, None], func, impl) for func, impl in self._builtin_replies()
        ]
        self.hook_lists = HookLists().lists
        self._hooks = HookLists(self.hook_lists)
        _reports.agent_created(self, locals())

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _overrides.decide(cls, ConversableAgent)
        # A subclass that defines one of AutoGen's state attributes (a ``_is_termination_msg``
        # method) must not hide the state from the steps: AutoGen's __init__ set an instance
        # attribute over it, so the view stays and what the subclass wrote is read only
        # before the state exists.
        for name, value in list(vars(cls).items()):
            view = getattr(ConversableAgent, name, None)
            if isinstance(view, StateView) and not isinstance(value, StateView):
                setattr(cls, name, StateView(view.field, value))

    # -- construction helpers -------------------------------------------------------------

    def _init_llm(self, llm_config: Any) -> None:
        self.llm_config = copy_llm_config(self.DEFAULT_CONFIG if llm_config is None else llm_config)
        self.client: Any = _tools.build_client(self.llm_config, self.state.tools_in_requests)

    def _builtin_replies(self) -> list[tuple[Callable[..., Any], Callable[..., Any]]]:
        """(public method, implementation) of each built-in reply, first tried first."""
        cls = ConversableAgent
        replies: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
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

    # -- properties -------------------------------------------------------------------------

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
        content: str = self._oai_system_message[0]["content"]  # a list for multimodal agents
        return content

    def update_system_message(self, system_message: str) -> None:
        self._oai_system_message[0]["content"] = system_message

    @property
    def chat_messages(self) -> dict[Any, list[dict[str, Any]]]:
        return cast("dict[Any, list[dict[str, Any]]]", self.state.messages)

    # AutoGen's attribute names for the conversation state, which extensions read.
    _oai_messages: StateView[dict[Any, list[dict[str, Any]]]] = StateView("messages")
    _consecutive_auto_reply_counter: StateView[dict[Any, int]] = StateView("auto_reply_counter")
    _max_consecutive_auto_reply_dict: StateView[dict[Any, int]] = StateView(
        "max_auto_reply_per_sender"
    )
    _max_consecutive_auto_reply: StateView[int] = StateView("max_auto_reply")
    reply_at_receive: StateView[dict[Any, bool]] = StateView("reply_at_receive")
    _human_input: StateView[list[str]] = StateView("human_input")
    # ... and for the settings the steps read, which extensions set.
    _oai_system_message: StateView[list[dict[str, Any]]] = StateView("system_message")
    _code_execution_config: StateView[dict[str, Any] | Literal[False]] = StateView(
        "code_execution_config"
    )
    _is_termination_msg: StateView[Callable[[dict[str, Any]], Any]] = StateView(
        "is_termination_msg"
    )

    @property
    def function_map(self) -> dict[str, Callable[..., Any]]:
        return self._function_map

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self._name!r})"

    # -- AutoGen's internal helpers, kept for compatibility: contrib modules and subclasses call
    # and override them; parley's turn calls an override only (see _compat_internals) --------

    _message_to_dict = staticmethod(_compat.message_to_dict)
    _append_oai_message = _compat.append_oai_message
    _process_received_message = _compat.process_received_message
    _print_received_message = _compat.print_received_message
    _is_silent = staticmethod(_compat.is_silent)
    _match_trigger = _compat.match_trigger
    _process_carryover = _compat.process_carryover
    _process_multimodal_carryover = _compat.process_multimodal_carryover
    _handle_carryover = _compat.handle_carryover
    _wrap_function = _compat.wrap_function
    _raise_exception_on_async_reply_functions = _compat.raise_exception_on_async_reply_functions
    # The model call of the LLM reply and of the reflection summary, and the summary's chain:
    # an override or a patch of one is called, looked up at each call (_overrides.own).
    _generate_oai_reply_from_client = _compat.generate_oai_reply_from_client
    _summarize_chat = _summary.summarize_chat
    _last_msg_as_summary = staticmethod(_summary.last_msg_as_summary)
    _reflection_with_llm_as_summary = staticmethod(_summary.reflection_with_llm_as_summary)
    _reflection_with_llm = _summary.reflection_with_llm

    # -- the turn (``_turn``): send -> receive -> generate_reply -> reply functions ---------

    def _parley_turn_setup(self) -> _turn.TurnSetup:
        """What this agent's turn walks, and the helpers of AutoGen's its class overrides."""
        decided = _overrides.of(self)
        return _turn.TurnSetup(
            self._reply_func_list,
            self._hooks,
            self._match_trigger if decided.match_chain else match_trigger,
            self._default_auto_reply,
            self._is_silent,
            append=_compat.appender(self) if decided.send_chain else None,
            process_received=self._process_received_message if decided.receive_chain else None,
            before_reply=self._parley_hook_runners if decided.hook_runners else None,
        )

    async def _parley_hook_runners(self, messages: list[Any]) -> list[Any]:
        """The messages through this class's own hook runners (it overrides one of
        ``process_last_received_message``, ``process_all_messages_before_reply`` or an ``a_``
        twin); a sync-only override runs in a worker thread, like other sync overrides."""
        for name in _overrides.HOOK_RUNNERS:
            if _overrides.sync_only(type(self), name, ConversableAgent):
                messages = await to_thread(getattr(self, name), messages)
            else:
                messages = await getattr(self, "a_" + name)(messages)
        return messages

    async def a_send(
        self,
        message: dict[str, Any] | str,
        recipient: Agent,
        request_reply: bool | None = None,
        silent: bool | None = False,
    ) -> None:
        """Store ``message`` as sent to ``recipient`` and deliver it (``_turn.send``)."""
        setup = self._parley_turn_setup()
        await _turn.send(self, setup, message, recipient, request_reply, silent)

    async def a_receive(
        self,
        message: dict[str, Any] | str,
        sender: Agent,
        request_reply: bool | None = None,
        silent: bool | None = False,
    ) -> None:
        """Store ``message`` from ``sender``, show it, and answer it if a reply is wanted
        (``_turn.receive``)."""
        setup = self._parley_turn_setup()
        await _turn.receive(self, setup, message, sender, request_reply, silent)

    async def a_generate_reply(
        self,
        messages: list[dict[str, Any]] | None = None,
        sender: Agent | None = None,
        **kwargs: Any,
    ) -> str | dict[str, Any] | None:
        """The first final answer of the reply functions that match ``sender``, else the
        default auto-reply (``_turn.reply``)."""
        if messages is None and sender is None:
            raise AssertionError("Either messages or sender must be provided.")
        history = self.state.messages[sender] if messages is None else as_messages(messages)
        setup = self._parley_turn_setup()
        exclude = kwargs.get("exclude") or ()
        return await _turn.reply(self, setup, history, sender, exclude)  # type: ignore[no-any-return]

    send = sync_face(a_send)
    receive = sync_face(a_receive)
    generate_reply = sync_face(a_generate_reply)

    # -- AutoGen's hook runners: what ``generate_reply`` does with the messages first ---------

    async def a_process_last_received_message(self, messages: list[Any]) -> list[Any]:
        """``messages`` with the last one's content through the ``process_last_received_message``
        hooks (skipped for function calls, templates, non-text content and ``"exit"``); a new
        list when a hook changed it, the stored messages untouched."""
        return await self._hooks.last_received(messages)

    async def a_process_all_messages_before_reply(self, messages: list[Any]) -> list[Any]:
        """``messages`` through the ``process_all_messages_before_reply`` hooks."""
        return await self._hooks.all_messages(messages)

    process_last_received_message = sync_face(a_process_last_received_message)
    process_all_messages_before_reply = sync_face(a_process_all_messages_before_reply)

    # -- built-in reply functions (public, as in AutoGen) -----------------------------------

    async def a_check_termination_and_human_reply(
        self, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, str | dict[str, Any] | None]:
        """Terminate, let the human answer, or fall through to an automatic reply."""
        done, reply = await _human.check_termination_and_human_reply(self, messages, sender, config)
        return done, as_dict(reply)

    async def a_generate_oai_reply(
        self, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, Any]:
        """Ask the agent's model for the reply."""
        return await _replies.generate_oai_reply(self, messages, sender, config)

    async def a_generate_tool_calls_reply(
        self, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, dict[str, Any] | None]:
        """Execute every tool call of the last message."""
        done, reply = await _replies.generate_tool_calls_reply(self, messages, sender, config)
        return done, as_dict(reply)

    async def a_generate_function_call_reply(
        self, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, dict[str, Any] | None]:
        """Execute the legacy ``function_call`` of the last message."""
        done, reply = await _replies.generate_function_call_reply(self, messages, sender, config)
        return done, as_dict(reply)

    async def a_generate_code_execution_reply(
        self, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, str | None]:
        """Run the code of the newest message that has some (legacy config)."""
        return await _code_execution.generate_code_execution_reply(self, messages, sender, config)

    check_termination_and_human_reply = sync_face(a_check_termination_and_human_reply)
    generate_oai_reply = sync_face(a_generate_oai_reply)
    generate_tool_calls_reply = sync_face(a_generate_tool_calls_reply)
    generate_function_call_reply = sync_face(a_generate_function_call_reply)
    generate_code_execution_reply = sync_face(a_generate_code_execution_reply)

    def _generate_code_execution_reply_using_executor(
        self, messages: Any = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, str | None]:
        """Run the code of the newest message that has some, through the agent's executor."""
        return run_sync(
            _code_execution.generate_code_execution_reply_using_executor(
                self, messages, sender, config
            )
        )

    def execute_code_blocks(self, code_blocks: list[tuple[str, str]]) -> tuple[int, str]:
        """Run (language, code) blocks in order; (last exit code, all logs). Legacy form."""
        return _code_execution.execute_code_blocks(self, code_blocks)

    def run_code(self, code: str, **kwargs: Any) -> tuple[int, str, str | None]:
        """Run one block; override to run code your own way. Legacy form."""
        from ..code_utils import execute_code

        return execute_code(code, **kwargs)

    async def a_execute_function(self, func_call: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        success, reply = await _replies.execute_function(self, func_call)
        return success, as_dict(reply)

    def execute_function(
        self, func_call: dict[str, Any], verbose: bool = False
    ) -> tuple[bool, dict[str, Any]]:
        success, reply = run_sync(_replies.execute_function(self, func_call, verbose=verbose))
        return success, as_dict(reply)

    # -- human input, auto-reply limits, history --------------------------------------------

    def get_human_input(self, prompt: str) -> str:
        """One line from the human through the current IOStream (override for custom UIs)."""
        from ..io import IOStream

        reply = IOStream.get_default().input(prompt)
        self.state.human_input.append(reply)
        return reply

    async def a_get_human_input(self, prompt: str) -> str:
        return await asyncio.to_thread(self.get_human_input, prompt)

    def max_consecutive_auto_reply(self, sender: Agent | None = None) -> int:
        if sender is None:
            return self.state.max_auto_reply
        return self.state.max_auto_reply_per_sender[sender]

    def update_max_consecutive_auto_reply(self, value: int, sender: Agent | None = None) -> None:
        self.state.set_max_auto_reply(value, sender)

    def reset_consecutive_auto_reply_counter(self, sender: Agent | None = None) -> None:
        self.state.reset_counter(sender)

    def stop_reply_at_receive(self, sender: Agent | None = None) -> None:
        self.state.stop_reply_at_receive(sender)

    def last_message(self, agent: Agent | None = None) -> dict[str, Any] | None:
        return cast("dict[str, Any] | None", self.state.last_message(agent))

    def last_parsed_reply(self, agent: Agent | None = None) -> Any:
        """The parsed object of this agent's last typed reply to ``agent`` (the only
        conversation when None, as :meth:`last_message`): its last message there that
        conforms to its ``llm_config``'s ``response_format``; None without one."""
        message = self.state.last_message(agent)  # AutoGen's errors for a missing conversation
        if message is None:
            return None
        schema = agent_schema(self)
        if schema is None:
            return None
        # last_message found the one conversation when agent is None
        conversations = self.state.messages
        history = conversations[agent] if agent is not None else next(iter(conversations.values()))
        own = [m for m in as_dicts(history) if m.get("role") == "assistant"]
        return last_parsed(own, lambda _message: schema)

    def chat_messages_for_summary(self, agent: Agent) -> list[dict[str, Any]]:
        return as_dicts(self.state.messages[agent])

    def clear_history(
        self, recipient: Agent | None = None, nr_messages_to_preserve: int | None = None
    ) -> None:
        from ..io import IOStream

        self.state.clear_history(
            self._name, IOStream.get_default(), recipient, nr_messages_to_preserve
        )

    def reset(self) -> None:
        self.clear_history()
        self.reset_consecutive_auto_reply_counter()
        self.stop_reply_at_receive()
        if self.client is not None:
            self.client.clear_usage_summary()
        for entry in self._reply_func_list:
            entry.reset()

    # -- usage ------------------------------------------------------------------------------

    def print_usage_summary(self, mode: str | list[str] = ["actual", "total"]) -> None:  # noqa: B006 - AutoGen's
        from ..io import IOStream

        out = IOStream.get_default()
        if self.client is None:
            out.print(f"No cost incurred from agent '{self._name}'.")
        else:
            out.print(f"Agent '{self._name}':")
            self.client.print_usage_summary(mode)

    def get_actual_usage(self) -> dict[str, Any] | None:
        return None if self.client is None else self.client.actual_usage_summary

    def get_total_usage(self) -> dict[str, Any] | None:
        return None if self.client is None else self.client.total_usage_summary

    # -- chats ----------------------------------------------------------------------------------

    def _prepare_chat(
        self,
        recipient: Any,
        clear_history: bool,
        prepare_recipient: bool = True,
        reply_at_receive: bool = True,
    ) -> None:
        self.state.reset_counter(recipient)
        self.state.reply_at_receive[recipient] = reply_at_receive
        if clear_history:
            self.clear_history(recipient)
            self.state.human_input = []
        if prepare_recipient:
            recipient._prepare_chat(self, clear_history, False, reply_at_receive)

    async def a_generate_init_message(
        self, message: dict[str, Any] | str | None, **kwargs: Any
    ) -> str | dict[str, Any]:
        if message is None:
            message = await _human.ask_human(self, ">", {}, None)
        return self._handle_carryover(message, kwargs)  # type: ignore[no-any-return]

    generate_init_message = sync_face(a_generate_init_message)

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
        """Start a chat with ``recipient`` and run it to its end: the first message (``message``,
        a callable making it, or the human's), then turns until a termination, a limit, or
        ``max_turns``; returns the history, the summary, the cost and the human's input."""
        setup = _chat_flow.ChatSetup(
            self._prepare_chat,
            self._is_silent(self, silent),
            _overrides.own(self, "_summarize_chat", _summary.summarize_chat),
        )
        return await _chat_flow.run_chat(
            self,
            setup,
            recipient,
            clear_history=clear_history,
            silent=silent,
            cache=cache,
            max_turns=max_turns,
            summary_method=summary_method,
            summary_args=summary_args,
            message=message,
            kwargs=kwargs,
        )

    initiate_chat = sync_face(a_initiate_chat)


_overrides.decide(ConversableAgent, ConversableAgent)
