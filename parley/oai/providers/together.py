"""``TogetherClient``: models served by Together AI through the ``together`` SDK
(``api_type: "together"``), at AutoGen's path ``autogen.oai.together``.

::

    config_list = [
        {"model": "mistralai/Mixtral-8x7B-Instruct-v0.1", "api_key": "...", "api_type": "together"}
    ]

Parameters under AutoGen's names, checked as AutoGen checked them (a wrong type or a value out
of bounds is the default, with a warning): ``max_tokens`` (512 when the config has none, as AutoGen),
``stream``, ``temperature``, ``top_p``, ``top_k``, ``repetition_penalty``,
``presence_penalty``, ``frequency_penalty``, ``min_p``, ``safety_model``; also ``stop``,
``seed``, ``response_format``, ``tool_choice``, and AutoGen's ``hide_tools``. Unlike AutoGen,
a streamed request with tools streams. ``base_url`` is the API's root (the SDK posts to
``/v1/chat/completions`` below it; ``https://api.together.xyz/v1`` works too).
"""

from __future__ import annotations

from typing import ClassVar

from ._openai_compatible import OpenAICompatibleClient
from ._params import Param

__all__ = ["TogetherClient"]


class TogetherClient(OpenAICompatibleClient):
    """The ModelClient of ``api_type: "together"``."""

    PROVIDER: ClassVar[str] = "together"
    LABEL: ClassVar[str] = "Together.AI"
    STRUCTURED_OUTPUT: ClassVar[str] = "native"  # response_format as given (json_schema)
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("max_tokens", int, default=512, bounds=(0, None)),
        Param("stream", bool, allow_none=False, default=False),
        Param("temperature", (int, float)),
        Param("top_p", (int, float)),
        Param("top_k", int),
        Param("repetition_penalty", float),
        Param("presence_penalty", (int, float), bounds=(-2, 2)),
        Param("frequency_penalty", (int, float), bounds=(-2, 2)),
        Param("min_p", (int, float), bounds=(0, 1)),
        Param("safety_model", str),
    )
    EXTRAS: ClassVar[tuple[str, ...]] = ("stop", "seed", "response_format", "tool_choice")


PRICES = TogetherClient.PRICES  # its table in prices.json, at AutoGen's module path too
