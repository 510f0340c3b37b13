"""Agents and conversations (AutoGen's ``autogen.agentchat``)."""

from ._human import APPROVE, EXIT, ReviewRequest
from .agent import Agent, LLMAgent
from .assistant_agent import AssistantAgent
from .chat import ChatResult, initiate_chats
from .conversable_agent import ConversableAgent, register_function
from .groupchat import GroupChat, GroupChatManager
from .user_proxy_agent import UserProxyAgent
from .utils import gather_usage_summary

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
    "ReviewRequest",
    "UserProxyAgent",
    "gather_usage_summary",
    "initiate_chats",
    "register_function",
]
