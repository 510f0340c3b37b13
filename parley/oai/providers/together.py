"""``TogetherClient``: models served by Together AI through the ``together`` SDK
(``api_type: "together"``), at AutoGen's path ``autogen.oai.together``.

::

    config_list = [
        {"model": "mistralai/Mixtral-8x7B-Instruct-v0.1", "api_key": "...", "api_type": "together"}
    ]

Parameters under AutoGen's names: ``max_tokens`` (512 when the config has none, as AutoGen),
``stream``, ``temperature``, ``top_p``, ``top_k``, ``repetition_penalty``,
``presence_penalty``, ``frequency_penalty``, ``min_p``, ``safety_model``; also ``stop``,
``seed``, ``response_format``, ``tool_choice``, and AutoGen's ``hide_tools``. Unlike AutoGen,
a streamed request with tools streams. ``base_url`` is the API's root (the SDK posts to
``/v1/chat/completions`` below it; ``https://api.together.xyz/v1`` works too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ._openai_compatible import COMMON_PARAMS, OpenAICompatibleClient

__all__ = ["TogetherClient"]

# USD per 1k (input, output) tokens, from together.ai/pricing (2024-2025). AutoGen priced by
# model size; listing the models is exact where it matters and the config's price covers others.
PRICES: dict[str, tuple[float, float]] = {
    "meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo": (0.00018, 0.00018),
    "meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo": (0.00088, 0.00088),
    "meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo": (0.0035, 0.0035),
    "meta-llama/Llama-3.3-70B-Instruct-Turbo": (0.00088, 0.00088),
    "meta-llama/Llama-3-8b-chat-hf": (0.0002, 0.0002),
    "meta-llama/Llama-3-70b-chat-hf": (0.0009, 0.0009),
    "mistralai/Mistral-7B-Instruct": (0.0002, 0.0002),
    "mistralai/Mixtral-8x7B-Instruct-v0.1": (0.0006, 0.0006),
    "mistralai/Mixtral-8x22B-Instruct-v0.1": (0.0012, 0.0012),
    "Qwen/Qwen2.5-7B-Instruct-Turbo": (0.0003, 0.0003),
    "Qwen/Qwen2.5-72B-Instruct-Turbo": (0.0012, 0.0012),
    "deepseek-ai/DeepSeek-V3": (0.00125, 0.00125),
}


class TogetherClient(OpenAICompatibleClient):
    """The ModelClient of ``api_type: "together"``."""

    PROVIDER: ClassVar[str] = "together"
    PRICES: ClassVar[Mapping[str, tuple[float, float]]] = PRICES
    SDK: ClassVar[str] = "together"
    CLIENT: ClassVar[str] = "AsyncTogether"
    API_KEY_ENV: ClassVar[str] = "TOGETHER_API_KEY"
    PARAMS: ClassVar[Mapping[str, Any]] = {
        **dict.fromkeys(COMMON_PARAMS),
        "max_tokens": 512,
        **dict.fromkeys(
            ("top_k", "repetition_penalty", "presence_penalty", "frequency_penalty", "min_p")
        ),
        "safety_model": None,
    }
