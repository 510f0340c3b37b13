"""The base class of agent capabilities (AutoGen's ``agent_capability``)."""

from __future__ import annotations

from typing import Any

__all__ = ["AgentCapability"]


class AgentCapability:
    """Something that can be added to an agent to extend what it does.

    A subclass implements :meth:`add_to_agent`, usually by registering a hook
    (``agent.register_hook``) or a reply function (``agent.register_reply``) and perhaps
    extending the agent's system message. Users call ``capability.add_to_agent(agent)``.
    """

    def __init__(self) -> None:
        pass

    def add_to_agent(self, agent: Any) -> None:
        """Add this capability to ``agent``."""
        raise NotImplementedError
