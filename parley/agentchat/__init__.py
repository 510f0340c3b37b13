"""Agents and conversations (AutoGen's ``autogen.agentchat``).

Each public name is imported on first access, so a two-agent chat never loads the group-chat
modules (see ``parley._lazy``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = [
    "APPROVE",
    "EXIT",
    "Agent",
    "AssistantAgent",
    "ChatResult",
    "ConversableAgent",
    "GroupChat",
    "GroupChatManager",
    "LLMAgent",
    "PendingToolCall",
    "ReviewRequest",
    "UserProxyAgent",
    "gather_usage_summary",
    "initiate_chats",
    "register_function",
]

if TYPE_CHECKING:
    from ._human import APPROVE, EXIT, PendingToolCall, ReviewRequest
    from .agent import Agent, LLMAgent
    from .assistant_agent import AssistantAgent
    from .chat import ChatResult, initiate_chats
    from .conversable_agent import ConversableAgent, register_function
    from .groupchat import GroupChat, GroupChatManager
    from .user_proxy_agent import UserProxyAgent
    from .utils import gather_usage_summary
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "APPROVE": "._human",
            "EXIT": "._human",
            "PendingToolCall": "._human",
            "ReviewRequest": "._human",
            "Agent": ".agent",
            "LLMAgent": ".agent",
            "AssistantAgent": ".assistant_agent",
            "ChatResult": ".chat",
            "initiate_chats": ".chat",
            "ConversableAgent": ".conversable_agent",
            "register_function": ".conversable_agent",
            "GroupChat": ".groupchat",
            "GroupChatManager": ".groupchat",
            "UserProxyAgent": ".user_proxy_agent",
            "gather_usage_summary": ".utils",
        },
        # AutoGen's package imported these, so code reads them as attributes
        # (``autogen.agentchat.utils.parse_tags_from_content``).
        submodules={
            "agent",
            "assistant_agent",
            "chat",
            "conversable_agent",
            "groupchat",
            "user_proxy_agent",
            "utils",
        },
    )
