"""``GroqClient``: models served by Groq through the ``groq`` SDK (``api_type: "groq"``), at
AutoGen's path ``autogen.oai.groq``.

::

    config_list = [{"model": "llama3-8b-8192", "api_key": "...", "api_type": "groq"}]

Parameters under AutoGen's names: ``frequency_penalty``, ``max_tokens``, ``presence_penalty``,
``seed``, ``stream``, ``temperature``, ``top_p``; also ``stop``, ``response_format``,
``tool_choice``, ``parallel_tool_calls``, and AutoGen's ``hide_tools``. ``base_url`` is the
API's root (the SDK posts to ``/openai/v1/chat/completions`` below it; a ``.../openai/v1``
given as OpenAI clients take it works too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ._openai_compatible import COMMON_PARAMS, OpenAICompatibleClient

__all__ = ["GroqClient"]

# USD per 1k (input, output) tokens, from groq.com/pricing (2024-2025).
PRICES: dict[str, tuple[float, float]] = {
    "llama3-8b-8192": (0.00005, 0.00008),
    "llama3-70b-8192": (0.00059, 0.00079),
    "llama-3.1-8b-instant": (0.00005, 0.00008),
    "llama-3.1-70b-versatile": (0.00059, 0.00079),
    "llama-3.3-70b-versatile": (0.00059, 0.00079),
    "mixtral-8x7b-32768": (0.00024, 0.00024),
    "gemma-7b-it": (0.00007, 0.00007),
    "gemma2-9b-it": (0.0002, 0.0002),
}


class GroqClient(OpenAICompatibleClient):
    """The ModelClient of ``api_type: "groq"``."""

    PROVIDER: ClassVar[str] = "groq"
    PRICES: ClassVar[Mapping[str, tuple[float, float]]] = PRICES
    SDK: ClassVar[str] = "groq"
    CLIENT: ClassVar[str] = "AsyncGroq"
    API_KEY_ENV: ClassVar[str] = "GROQ_API_KEY"
    PATH: ClassVar[tuple[str, ...]] = ("/openai/v1",)
    PARAMS: ClassVar[Mapping[str, Any]] = dict.fromkeys(
        (*COMMON_PARAMS, "frequency_penalty", "presence_penalty", "parallel_tool_calls")
    )
