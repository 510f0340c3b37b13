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


class TogetherClient(OpenAICompatibleClient):
    """The ModelClient of ``api_type: "together"``."""

    PROVIDER: ClassVar[str] = "together"
    PARAMS: ClassVar[Mapping[str, Any]] = {
        **dict.fromkeys(COMMON_PARAMS),
        "max_tokens": 512,
        **dict.fromkeys(
            ("top_k", "repetition_penalty", "presence_penalty", "frequency_penalty", "min_p")
        ),
        "safety_model": None,
    }


PRICES = TogetherClient.PRICES  # its table in prices.json, at AutoGen's module path too
