"""Agent capabilities (AutoGen's ``autogen.agentchat.contrib.capabilities``).

Import from the modules as in AutoGen (``from parley.agentchat.contrib.capabilities import
transform_messages, transforms``). As an extension (AutoGen's package is empty) the public names
can also be imported from the package itself; each module is loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...._lazy import lazy_exports

__all__ = [
    "AgentCapability",
    "LLMLingua",
    "MessageHistoryLimiter",
    "MessageTokenLimiter",
    "MessageTransform",
    "Teachability",
    "TextCompressor",
    "TextMessageCompressor",
    "TextMessageContentName",
    "TransformMessages",
    "VisionCapability",
]

if TYPE_CHECKING:
    from .agent_capability import AgentCapability
    from .teachability import Teachability
    from .text_compressors import LLMLingua, TextCompressor
    from .transform_messages import TransformMessages
    from .transforms import (
        MessageHistoryLimiter,
        MessageTokenLimiter,
        MessageTransform,
        TextMessageCompressor,
        TextMessageContentName,
    )
    from .vision_capability import VisionCapability
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "AgentCapability": ".agent_capability",
            "LLMLingua": ".text_compressors",
            "Teachability": ".teachability",
            "TextCompressor": ".text_compressors",
            "TransformMessages": ".transform_messages",
            "MessageHistoryLimiter": ".transforms",
            "MessageTokenLimiter": ".transforms",
            "MessageTransform": ".transforms",
            "TextMessageCompressor": ".transforms",
            "TextMessageContentName": ".transforms",
            "VisionCapability": ".vision_capability",
        },
        submodules=(
            "agent_capability",
            "teachability",
            "text_compressors",
            "transform_messages",
            "transforms",
            "transforms_util",
            "vision_capability",
        ),
    )
