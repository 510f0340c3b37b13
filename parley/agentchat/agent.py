"""The ``Agent`` and ``LLMAgent`` protocols (AutoGen's ``autogen.agentchat.agent``).

Defined in :mod:`parley._agent_protocol`, below every module that needs to recognise an agent;
this is their public home.
"""

from __future__ import annotations

from .._agent_protocol import Agent, LLMAgent

__all__ = ["Agent", "LLMAgent"]

# Their public home, as in AutoGen (reprs, pickles and docs name this module).
Agent.__module__ = __name__
LLMAgent.__module__ = __name__
