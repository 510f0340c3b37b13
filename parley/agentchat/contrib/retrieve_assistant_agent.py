"""``RetrieveAssistantAgent`` (AutoGen's ``retrieve_assistant_agent``): deprecated, kept for old code.

An ``AssistantAgent`` that ends the chat once code ran successfully and passes ``UPDATE CONTEXT``
on when the message it got asks for it. Use ``AssistantAgent`` with ``RetrieveUserProxyAgent``.
"""

from __future__ import annotations

import warnings
from typing import Any

from ...code_utils import content_str
from ..agent import Agent
from ..assistant_agent import AssistantAgent

__all__ = ["RetrieveAssistantAgent"]


class RetrieveAssistantAgent(AssistantAgent):
    """An assistant for RetrieveChat (deprecated: use ``AssistantAgent``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            "The RetrieveAssistantAgent is deprecated. Please use the AssistantAgent instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        super().__init__(*args, **kwargs)
        self.register_reply(Agent, RetrieveAssistantAgent._generate_retrieve_assistant_reply)

    def _generate_retrieve_assistant_reply(
        self,
        messages: list[dict[str, Any]] | None = None,
        sender: Agent | None = None,
        config: Any = None,
    ) -> tuple[bool, str | None]:
        if messages is None:
            messages = self.chat_messages[sender]
        content = messages[-1].get("content")
        text = content_str(content) if content is not None else ""
        if "exitcode: 0 (execution succeeded)" in text:
            return True, "TERMINATE"
        if "UPDATE CONTEXT" in text[-20:].upper() or "UPDATE CONTEXT" in text[:20].upper():
            return True, "UPDATE CONTEXT"
        return False, None
