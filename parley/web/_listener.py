"""The listener of parley's reports (:mod:`parley._core.reports`) that feeds the page: chats starting and ending, who
speaks, the messages, the pieces of a streamed reply (``token_delta``: the draft of the coming
message), tool calls and their results, code and its output, what each model call cost.

Each report is attributed to the chat current where it is made (``parley.usage``'s
``current_run``: listeners run on the thread doing the work, in its context), so concurrent
and nested chats keep their own transcripts.
"""

from __future__ import annotations

import json
from typing import Any

from .._core import events as _events
from .._core.reports import (
    ChatStep,
    CodeExecutionStep,
    LLMCallStep,
    ReceivedMessageEvent,
    TokenDeltaEvent,
    ToolCallStep,
    TurnStep,
)
from ..usage._run import current_run
from ._hub import Hub
from ._render import capped, error_text, message_view, plain

__all__ = ["WebListener", "agent_name"]


def agent_name(agent: Any) -> str | None:
    if agent is None:
        return None
    name = getattr(agent, "name", agent)
    return name if isinstance(name, str) else str(name)


def _is_group_manager(agent: Any) -> bool:
    groupchat = getattr(agent, "groupchat", None)
    return callable(getattr(groupchat, "nested_agents", None))


def _float(value: Any) -> float:
    try:
        return float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0


def _tokens(usage: Any) -> int:
    if not isinstance(usage, dict):
        return 0
    total = usage.get("total_tokens")
    if total is None:
        total = (usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)
    try:
        return int(total)
    except (TypeError, ValueError):
        return 0


def _arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        return capped(arguments)
    return capped(json.dumps(plain(arguments), indent=2, ensure_ascii=False))


class WebListener(_events.Listener):
    """See the module docstring."""

    def __init__(self, hub: Hub) -> None:
        self._hub = hub
        # Group chat managers seen so far: the copies they relay to every member are the
        # speaker's message again, shown once (when the manager received it).
        self._managers: set[str] = set()

    def on_step_start(self, step: _events.Step) -> None:
        if isinstance(step, ChatStep):
            run = current_run()
            if run is not None:
                self._hub.chat_started(run)
        elif isinstance(step, TurnStep):
            name = agent_name(step.agent)
            if name is not None:
                self._hub.turn(current_run(), name, True)
        elif isinstance(step, ToolCallStep):
            step.slots[self] = self._hub.add_item(
                current_run(),
                {
                    "kind": "tool",
                    "agent": agent_name(step.agent),
                    "name": step.name,
                    "arguments": _arguments(step.attrs["arguments"]),
                    "call_id": str(step.attrs["call_id"] or ""),
                    "status": "running",
                },
            )
        elif isinstance(step, CodeExecutionStep):
            step.slots[self] = self._hub.add_item(
                current_run(),
                {
                    "kind": "code",
                    "agent": agent_name(step.agent),
                    "languages": [str(lang) for lang in step.attrs["languages"]],
                    "code": capped(step.attrs["code"]),
                    "status": "running",
                },
            )

    def on_step_end(self, step: _events.Step) -> None:
        if isinstance(step, ChatStep):
            self._chat_ended(step)
        elif isinstance(step, TurnStep):
            name = agent_name(step.agent)
            if name is not None:
                self._hub.turn(current_run(), name, False)
        elif isinstance(step, LLMCallStep):
            attrs = step.attrs
            cost = 0.0 if attrs.get("cached") else _float(attrs.get("cost"))
            self._hub.spent(current_run(), cost, _tokens(attrs.get("usage")))
        elif isinstance(step, ToolCallStep):
            tool = step.attrs
            self._item_done(step, "result", tool.get("result"), tool.get("success") is False)
        elif isinstance(step, CodeExecutionStep):
            exit_code = step.attrs.get("exit_code")
            self._item_done(
                step,
                "output",
                step.attrs.get("output"),
                exit_code != 0,
                exit_code=exit_code if isinstance(exit_code, int) else None,
            )

    def _item_done(
        self, step: _events.Step, key: str, shown: Any, failed: bool, **fields: Any
    ) -> None:
        """The page's item of a finished tool call or code run: ``shown`` as its ``key`` (the
        error's text when the step raised), failed if it raised or ``failed``."""
        text = error_text(step.error) if step.error is not None else shown
        self._hub.update_item(
            current_run(),
            step.slots.get(self),
            status="failed" if failed or step.error is not None else "done",
            **fields,
            **{key: capped(str(text if text is not None else ""))},
        )

    def _chat_ended(self, step: ChatStep) -> None:
        run = current_run()
        if run is None or run.id != step.attrs["chat_id"]:
            return
        attrs = step.attrs
        usage = attrs.get("usage")
        summary = attrs.get("summary")
        self._hub.chat_ended(
            run,
            reason=attrs.get("termination_reason"),
            summary=capped(str(summary)) if summary else None,
            cost=_float(usage.cost) if usage is not None else None,
            tokens=int(usage.total_tokens) if usage is not None else None,
            error=error_text(step.error) if step.error is not None else None,
        )

    def on_event(self, event: _events.Event) -> None:
        if isinstance(event, TokenDeltaEvent):
            self._streamed(event)
            return
        if not isinstance(event, ReceivedMessageEvent):
            return
        receiver = event.source
        sender = event.data["sender"]
        if _is_group_manager(receiver):
            self._managers.add(str(agent_name(receiver)))
        elif sender in self._managers:
            return
        self._hub.add_item(
            current_run(),
            {
                "kind": "message",
                "sender": sender,
                "recipient": agent_name(receiver),
                **message_view(event.data["message"]),
            },
        )

    def _streamed(self, event: TokenDeltaEvent) -> None:
        # A silenced stream (a silent chat, a summary) was not shown as it came: no draft.
        if not event.data["echoed"]:
            return
        speaker = _streaming_for()
        if speaker is not None:
            self._hub.streamed(current_run(), speaker, event.data["text"], event.data["reset"])


def _streaming_for() -> str | None:
    """The agent whose model call is streaming here, if any."""
    step = _events.current_step()
    while step is not None:
        if isinstance(step, LLMCallStep):
            charged = step.attrs["charged_to"]
            return str(charged) if charged else (agent_name(step.agent) or "the model")
        if isinstance(step, (TurnStep, ChatStep)):
            return None
        step = step.parent
    return None
