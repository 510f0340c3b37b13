"""The listener :func:`parley.runtime_logging.start` registers: parley's reports
(``parley._core.events``) turned into AutoGen's logger calls.

Events: ``agent_created`` -> ``log_new_agent``; ``wrapper_created`` -> ``log_new_wrapper``;
``client_created`` -> ``log_new_client``; ``received_message`` -> ``log_event``. Step ends:
``reply_func`` -> event ``reply_func_executed``; ``llm_call`` -> ``log_chat_completion`` (a
failed call is not logged, as in AutoGen); ``tool_call`` -> ``log_function_use``;
``code_execution`` -> event ``code_execution`` (``code_execution_rejected`` for blocks the human
rejected); a chat's start and end -> events ``chat_start`` and ``chat_end``. Each call runs with the step in
``parley.logger._records.reporting``, where parley's loggers read durations and call ids, and
with ``from_listener`` set: parley's loggers write these records in batches, while a call from
anywhere else returns once its record is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._core.events import Event, Listener, Step
from .._core.reports import (
    AgentCreatedEvent,
    ChatStep,
    ClientCreatedEvent,
    CodeExecutionStep,
    LLMCallStep,
    ReceivedMessageEvent,
    ReplyFuncStep,
    ToolCallStep,
    WrapperCreatedEvent,
)
from ._records import from_listener, reporting
from ._secrets import remember_in
from .base_logger import BaseLogger
from .logger_utils import format_ts

__all__ = ["Reporter"]


class _Named:
    """A stand-in for a tool whose function cannot be found (loggers read ``__name__``)."""

    def __init__(self, name: str) -> None:
        self.__name__ = name

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"


class Reporter(Listener):
    """Sends parley's reports to one :class:`BaseLogger` (see the module docstring)."""

    def __init__(self, logger: BaseLogger) -> None:
        self.logger = logger
        self._clients: set[int] = set()  # the model clients whose credentials are noted
        self._on_end: dict[type[Step], Callable[[Any], None]] = {
            ReplyFuncStep: self._reply_func,
            LLMCallStep: self._llm_call,
            ToolCallStep: self._tool_call,
            CodeExecutionStep: self._code_execution,
            ChatStep: self._chat_end,
        }

    def on_event(self, event: Event) -> None:
        token = from_listener.set(True)
        try:
            self._event(event)
        finally:
            from_listener.reset(token)

    def _event(self, event: Event) -> None:
        source, log = event.source, self.logger
        if isinstance(event, ReceivedMessageEvent):
            data = event.data
            log.log_event(
                source,
                "received_message",
                message=data["message"],
                sender=data["sender"],
                valid=data["valid"],
            )
        elif isinstance(event, AgentCreatedEvent):
            log.log_new_agent(source, event.data["init_args"])
        elif isinstance(event, WrapperCreatedEvent):
            # AutoGen logged the constructor's locals(): the config list and the base config.
            base = dict(event.data["init_args"])
            config_list = base.pop("config_list", None)
            log.log_new_wrapper(source, {"config_list": config_list, "base_config": base})
        elif isinstance(event, ClientCreatedEvent):
            log.log_new_client(source, event.data["wrapper"], event.data["init_args"])

    def on_step_start(self, step: Step) -> None:
        if not isinstance(step, ChatStep):
            return
        attrs = step.attrs
        token, listened = reporting.set(step), from_listener.set(True)
        try:
            self.logger.log_event(
                step.agent if step.agent is not None else attrs["sender"],
                "chat_start",
                chat_id=attrs["chat_id"],
                parent_chat_id=attrs["parent_chat_id"],
                sender=attrs["sender"],
                recipient=attrs["recipient"],
                message=attrs["message"],
                max_turns=attrs["max_turns"],
                start_time=format_ts(step.start_time),
            )
        finally:
            from_listener.reset(listened)
            reporting.reset(token)

    def on_step_end(self, step: Step) -> None:
        handler = self._on_end.get(type(step))
        if handler is None:
            return
        token, listened = reporting.set(step), from_listener.set(True)
        try:
            handler(step)
        finally:
            from_listener.reset(listened)
            reporting.reset(token)

    # -- steps ----------------------------------------------------------------------------

    def _reply_func(self, step: ReplyFuncStep) -> None:
        if step.error is not None:
            return
        attrs = step.attrs
        func = attrs["func"]
        self.logger.log_event(
            step.agent,
            "reply_func_executed",
            reply_func_module=getattr(func, "__module__", None),
            reply_func_name=getattr(func, "__name__", step.name),
            final=attrs.get("final"),
            reply=attrs.get("reply"),
        )

    def _llm_call(self, step: LLMCallStep) -> None:
        attrs = step.attrs
        if step.error is not None or "response" not in attrs:
            return
        wrapper, client = attrs["wrapper"], attrs["client"]
        if id(client) not in self._clients:
            # A client made before logging started: its key is scrubbed from what is written
            # (a tool's output, a reply quoting it) all the same.
            self._clients.add(id(client))
            remember_in(getattr(client, "_kwargs", None))
        self.logger.log_chat_completion(
            attrs["invocation_id"],
            id(client),
            getattr(wrapper, "wrapper_id", id(wrapper)),
            step.agent if step.agent is not None else wrapper,
            attrs["request"],
            attrs["response"],
            int(bool(attrs.get("cached"))),
            float(attrs.get("cost") or 0.0),
            format_ts(step.start_time),
        )

    def _tool_call(self, step: ToolCallStep) -> None:
        attrs = step.attrs
        if attrs.get("approval") == "rejected":
            # The function never ran: not a function use, an event of the agent's.
            self.logger.log_event(
                step.agent,
                "tool_call_rejected",
                tool=step.name,
                arguments=attrs["arguments"],
                call_id=attrs["call_id"],
                result=attrs.get("result"),
            )
            return
        functions = getattr(step.agent, "function_map", None)
        function: Any = functions.get(step.name) if isinstance(functions, dict) else None
        self.logger.log_function_use(
            step.agent,
            function if function is not None else _Named(step.name),
            attrs["arguments"],
            attrs.get("result"),
        )

    def _code_execution(self, step: CodeExecutionStep) -> None:
        attrs = step.attrs
        if attrs.get("approval") == "rejected":
            # The code never ran: not a code execution, an event of the agent's.
            self.logger.log_event(
                step.agent,
                "code_execution_rejected",
                languages=attrs["languages"],
                code=attrs["code"],
                result=attrs.get("output"),
            )
            return
        self.logger.log_event(
            step.agent,
            "code_execution",
            executor=attrs["executor"],
            languages=attrs["languages"],
            code=attrs["code"],
            exit_code=attrs.get("exit_code"),
            output=attrs.get("output"),
            error=repr(step.error) if step.error is not None else None,
            start_time=format_ts(step.start_time),
            duration=step.duration,
        )

    def _chat_end(self, step: ChatStep) -> None:
        attrs = step.attrs
        usage = attrs.get("usage")
        self.logger.log_event(
            step.agent if step.agent is not None else attrs["sender"],
            "chat_end",
            chat_id=attrs["chat_id"],
            termination_reason=attrs.get("termination_reason")
            or (f"error: {type(step.error).__name__}" if step.error is not None else None),
            summary=attrs.get("summary"),
            cost=attrs.get("cost"),
            total_cost=usage.cost if usage is not None else None,
            llm_calls=usage.llm_calls if usage is not None else None,
            total_tokens=usage.total_tokens if usage is not None else None,
            cached_tokens=usage.cached_tokens if usage is not None else None,
            cache_creation_tokens=usage.cache_creation_tokens if usage is not None else None,
            reasoning_tokens=usage.reasoning_tokens if usage is not None else None,
            end_time=format_ts(step.end_time or step.start_time),
            duration=step.duration,
        )
