"""The ``Agent`` and ``LLMAgent`` protocols, and the one test of "is this an agent?".

Their public home is ``parley.agentchat.agent`` (AutoGen's ``autogen.agentchat.agent``); they
are defined down here so that modules below ``agentchat`` (``parley.graph_utils``) can tell an
agent from anything else without importing the agents.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["Agent", "LLMAgent", "is_agent"]


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


# What Agent requires; a class that has all of it is an agent whatever its instances hold.
_AGENT_MEMBERS = (
    "name",
    "description",
    "send",
    "a_send",
    "receive",
    "a_receive",
    "generate_reply",
    "a_generate_reply",
)
_agent_classes: dict[type, bool] = {}


def is_agent(obj: Any) -> bool:
    """Whether ``obj`` is an :class:`Agent` (``isinstance(obj, Agent)``, made cheap).

    The structural check of a runtime Protocol is slow (tens of microseconds, on every reply
    function of every turn); what a class defines does not change, so it is asked once per
    class, and the Protocol itself only decides for objects whose class lacks a member (a
    ``name`` set on the instance, say).
    """
    cls = type(obj)
    known = _agent_classes.get(cls)
    if known is None:
        known = _agent_classes[cls] = all(hasattr(cls, member) for member in _AGENT_MEMBERS)
    return known or isinstance(obj, Agent)
