"""The ``Agent`` and ``LLMAgent`` protocols (AutoGen's ``autogen.agentchat.agent``)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["Agent", "LLMAgent"]


@runtime_checkable
class Agent(Protocol):
    """Anything that can take part in a conversation (a structural test)."""

    @property
    def name(self) -> str:
        """The agent's name."""
        ...

    @property
    def description(self) -> str:
        """How the agent is introduced to others (in group chats)."""
        ...

    def send(
        self, message: dict[str, Any] | str, recipient: Agent, request_reply: bool | None = None
    ) -> None:
        """Send a message to another agent."""
        ...

    async def a_send(
        self, message: dict[str, Any] | str, recipient: Agent, request_reply: bool | None = None
    ) -> None:
        """Send a message to another agent (async)."""
        ...

    def receive(
        self, message: dict[str, Any] | str, sender: Agent, request_reply: bool | None = None
    ) -> None:
        """Receive a message from another agent."""
        ...

    async def a_receive(
        self, message: dict[str, Any] | str, sender: Agent, request_reply: bool | None = None
    ) -> None:
        """Receive a message from another agent (async)."""
        ...

    def generate_reply(
        self,
        messages: list[dict[str, Any]] | None = None,
        sender: Agent | None = None,
        **kwargs: Any,
    ) -> str | dict[str, Any] | None:
        """A reply to the messages; None means no reply."""
        ...

    async def a_generate_reply(
        self,
        messages: list[dict[str, Any]] | None = None,
        sender: Agent | None = None,
        **kwargs: Any,
    ) -> str | dict[str, Any] | None:
        """A reply to the messages (async); None means no reply."""
        ...


@runtime_checkable
class LLMAgent(Agent, Protocol):
    """An agent with a system message."""

    @property
    def system_message(self) -> str:
        """The system message of this agent."""
        ...

    def update_system_message(self, system_message: str) -> None:
        """Replace the system message."""
        ...
