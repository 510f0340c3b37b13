"""What chats spend, and limits on it.

- :class:`Budget`: ``initiate_chat(..., budget=Budget(max_cost=0.50))`` (or
  ``GroupChatManager(..., budget=...)``) ends a chat cleanly when a limit is reached;
  ``ChatResult.termination_reason`` says which (``"budget:cost"``, ``"budget:tokens"``,
  ``"budget:llm_calls"``, ``"budget:seconds"``).
- :class:`Usage`: ``ChatResult.usage``, every model call the chat caused — its agents'
  replies, speaker selection, the reflection summary, nested chats, tools that call models —
  each charged to the agent that made it; split per agent, model, chat or purpose, printable
  as a table. ``ChatResult.cost`` is the same in AutoGen's shape.
- :class:`LLMCall`: one recorded call.

``parley.gather_usage_summary(agents)`` keeps AutoGen's meaning (the agents' clients' running
totals); see :mod:`parley.usage._run` for how calls are charged.
"""

from __future__ import annotations

from ._budget import BUDGET_REASONS, Budget
from ._run import LLMCall
from ._view import Usage

__all__ = ["BUDGET_REASONS", "Budget", "LLMCall", "Usage"]
