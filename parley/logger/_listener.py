"""The listener :func:`parley.runtime_logging.start` registers: parley's reports
(``parley._events``) turned into AutoGen's logger calls.

Events: ``agent_created`` -> ``log_new_agent``; ``wrapper_created`` -> ``log_new_wrapper``;
``client_created`` -> ``log_new_client``; ``received_message`` -> ``log_event``. Step ends:
``reply_func`` -> event ``reply_func_executed``; ``llm_call`` -> ``log_chat_completion`` (a
failed call is not logged, as in AutoGen); ``tool_call`` -> ``log_function_use``;
``code_execution`` -> event ``code_execution``; a chat's start and end -> events
``chat_start`` and ``chat_end``. Each call runs with the step in
``parley.logger._records.reporting``, where parley's loggers read durations and call ids.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._events import Event, Listener, Step
from ._records import reporting
from ._secrets import remember_in
from .base_logger import BaseLogger
from .logger_utils import format_ts

__all__ = ["Reporter"]

# The step attributes each event carries under their own names (None when a step has none).
_CHAT_START = ("chat_id", "parent_chat_id", "sender", "recipient", "message", "max_turns")
_CODE_EXECUTION = ("executor", "languages", "code", "exit_code", "output")


def _picked(attrs: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {name: attrs.get(name) for name in names}


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
        self._on_end: dict[str, Callable[[Step], None]] = {
            "reply_func": self._reply_func,
            "llm_call": self._llm_call,
            "tool_call": self._tool_call,
            "code_execution": self._code_execution,
            "chat": self._chat_end,
        }

    def on_event(self, event: Event) -> None:
        name, source, data = event.name, event.source, event.data
        log = self.logger
        if name == "received_message":
            log.log_event(
                source,
                "received_message",
                message=data.get("message"),
                sender=data.get("sender"),
                valid=data.get("valid", True),
            )
        elif name == "agent_created":
            log.log_new_agent(source, data.get("init_args") or {})
        elif name == "wrapper_created":
            log.log_new_wrapper(source, data.get("init_args") or {})
        elif name == "client_created":
            log.log_new_client(source, data.get("wrapper"), data.get("init_args") or {})

    def on_step_start(self, step: Step) -> None:
        if step.kind != "chat":
            return
        attrs = step.attrs
        token = reporting.set(step)
        try:
            self.logger.log_event(
                step.agent if step.agent is not None else attrs.get("sender") or "",
                "chat_start",
                **_picked(attrs, _CHAT_START),
                start_time=format_ts(step.start_time),
            )
        finally:
            reporting.reset(token)

    def on_step_end(self, step: Step) -> None:
        handler = self._on_end.get(step.kind)
        if handler is None:
            return
        token = reporting.set(step)
        try:
            handler(step)
        finally:
            reporting.reset(token)

    # -- steps ----------------------------------------------------------------------------

    def _reply_func(self, step: Step) -> None:
        if step.error is not None:
            return
        attrs = step.attrs
        func = attrs.get("func")
        self.logger.log_event(
            step.agent,
            "reply_func_executed",
            reply_func_module=getattr(func, "__module__", None),
            reply_func_name=getattr(func, "__name__", step.name),
            final=attrs.get("final"),
            reply=attrs.get("reply"),
        )

    def _llm_call(self, step: Step) -> None:
        attrs = step.attrs
        if step.error is not None or "response" not in attrs:
            return
        wrapper, client = attrs.get("wrapper"), attrs.get("client")
        if id(client) not in self._clients:
            # A client made before logging started: its key is scrubbed from what is written
            # (a tool's output, a reply quoting it) all the same.
            self._clients.add(id(client))
            remember_in(getattr(client, "_kwargs", None))
        self.logger.log_chat_completion(
            attrs.get("invocation_id") or step.id,  # type: ignore[arg-type]
            id(client),
            getattr(wrapper, "wrapper_id", id(wrapper)),
            step.agent if step.agent is not None else wrapper,
            attrs.get("request") or {},
            attrs.get("response"),
            int(bool(attrs.get("cached"))),
            float(attrs.get("cost") or 0.0),
            format_ts(step.start_time),
        )

    def _tool_call(self, step: Step) -> None:
        attrs = step.attrs
        functions = getattr(step.agent, "function_map", None)
        function: Any = functions.get(step.name) if isinstance(functions, dict) else None
        self.logger.log_function_use(
            step.agent,
            function if function is not None else _Named(step.name),
            attrs.get("arguments") or {},
            attrs.get("result"),
        )

    def _code_execution(self, step: Step) -> None:
        attrs = step.attrs
        self.logger.log_event(
            step.agent,
            "code_execution",
            **_picked(attrs, _CODE_EXECUTION),
            error=repr(step.error) if step.error is not None else None,
            start_time=format_ts(step.start_time),
            duration=step.duration,
        )

    def _chat_end(self, step: Step) -> None:
        attrs = step.attrs
        usage = attrs.get("usage")
        self.logger.log_event(
            step.agent if step.agent is not None else attrs.get("sender") or "",
            "chat_end",
            chat_id=attrs.get("chat_id"),
            termination_reason=attrs.get("termination_reason")
            or (f"error: {type(step.error).__name__}" if step.error is not None else None),
            summary=attrs.get("summary"),
            cost=attrs.get("cost"),
            total_cost=usage.cost if usage is not None else None,
            llm_calls=usage.llm_calls if usage is not None else None,
            total_tokens=usage.total_tokens if usage is not None else None,
            end_time=format_ts(step.end_time or step.start_time),
            duration=step.duration,
        )
