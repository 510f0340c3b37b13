"""Agents and conversations (AutoGen's ``autogen.agentchat``).

Filled by the conversation-core issue.
"""
