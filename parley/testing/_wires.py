"""Every wire protocol the fake server speaks, in the order paths are matched."""

from __future__ import annotations

from ._endpoints import OpenAIChat, OpenAIText
from ._wire import Wire
from ._wire_anthropic import Anthropic
from ._wire_bedrock import Bedrock
from ._wire_cohere import Cohere
from ._wire_gemini import Gemini
from ._wire_ollama import Ollama
from ._wire_responses import OpenAIResponses

__all__ = ["WIRES"]

WIRES: tuple[Wire, ...] = (
    OpenAIChat(),
    OpenAIText(),
    OpenAIResponses(),
    Anthropic(),
    Ollama(),
    Gemini(),
    Bedrock(),
    Cohere(),
)
