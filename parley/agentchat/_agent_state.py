"""State methods of ``ConversableAgent``: human input, auto-reply limits, history, usage
(spec 2.11, 2.15, 2.17)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ._registry import ReplyEntry

if TYPE_CHECKING:
    from .agent import Agent

__all__ = ["AgentStateMixin"]


class AgentStateMixin:
    """Part of ConversableAgent: what an agent remembers, and how it is reset."""

    _name: str
    _oai_messages: dict[Any, list[dict[str, Any]]]
    _human_input: list[str]
    _max_consecutive_auto_reply: int
    _max_consecutive_auto_reply_dict: dict[Any, int]
    _consecutive_auto_reply_counter: dict[Any, int]
    _reply_func_list: list[ReplyEntry]
    reply_at_receive: dict[Any, bool]
    client: Any

    # -- human input and auto-reply limits ------------------------------------------------

    def get_human_input(self, prompt: str) -> str:
        """One line from the human through the current IOStream (override for custom UIs)."""
        from ..io import IOStream

        reply = IOStream.get_default().input(prompt)
        self._human_input.append(reply)
        return reply

    async def a_get_human_input(self, prompt: str) -> str:

        return await asyncio.to_thread(self.get_human_input, prompt)

    def max_consecutive_auto_reply(self, sender: Agent | None = None) -> int:
        if sender is None:
            return self._max_consecutive_auto_reply
        return self._max_consecutive_auto_reply_dict[sender]

    def update_max_consecutive_auto_reply(self, value: int, sender: Agent | None = None) -> None:
        if sender is None:
            self._max_consecutive_auto_reply = value
            for key in self._max_consecutive_auto_reply_dict:
                self._max_consecutive_auto_reply_dict[key] = value
        else:
            self._max_consecutive_auto_reply_dict[sender] = value

    def reset_consecutive_auto_reply_counter(self, sender: Agent | None = None) -> None:
        if sender is None:
            self._consecutive_auto_reply_counter.clear()
        else:
            self._consecutive_auto_reply_counter[sender] = 0

    # -- history and state ----------------------------------------------------------------

    def last_message(self, agent: Agent | None = None) -> dict[str, Any] | None:
        if agent is None:
            n = len(self._oai_messages)
            if n == 0:
                return None
            if n == 1:
                for conversation in self._oai_messages.values():
                    return conversation[-1]
            raise ValueError(
                "More than one conversation is found. Please specify the sender to get the last message."
            )
        if agent not in self._oai_messages:
            raise KeyError(
                f"The agent '{agent.name}' is not present in any conversation. No history available for this agent."
            )
        return self._oai_messages[agent][-1]

    def chat_messages_for_summary(self, agent: Agent) -> list[dict[str, Any]]:
        return self._oai_messages[agent]

    def clear_history(
        self, recipient: Agent | None = None, nr_messages_to_preserve: int | None = None
    ) -> None:
        from ..io import IOStream

        if recipient is not None:
            self._oai_messages[recipient].clear()
            if nr_messages_to_preserve:
                IOStream.get_default().print(
                    "WARNING: `nr_preserved_messages` is ignored when clearing chat history with a specific agent.",
                    flush=True,
                )
            return
        if not nr_messages_to_preserve:
            self._oai_messages.clear()
            return
        for key, messages in self._oai_messages.items():
            keep = nr_messages_to_preserve
            first = messages[-keep] if len(messages) >= keep else None
            if first is not None and "tool_responses" in first and len(messages) > keep:
                keep += 1  # never keep a tool response without the call it answers
                IOStream.get_default().print(
                    f"Preserving one more message for {self._name} to not divide history between "
                    "tool call and tool response.",
                    flush=True,
                )
            self._oai_messages[key] = messages[-keep:]

    def stop_reply_at_receive(self, sender: Agent | None = None) -> None:
        if sender is None:
            self.reply_at_receive.clear()
        else:
            self.reply_at_receive[sender] = False

    def reset(self) -> None:
        self.clear_history()
        self.reset_consecutive_auto_reply_counter()
        self.stop_reply_at_receive()
        if self.client is not None:
            self.client.clear_usage_summary()
        for entry in self._reply_func_list:
            entry.reset()

    # -- usage ------------------------------------------------------------------------------------

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
