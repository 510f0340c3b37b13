"""``GroqClient``: models served by Groq through the ``groq`` SDK (``api_type: "groq"``), at
AutoGen's path ``autogen.oai.groq``.

::

    config_list = [{"model": "llama3-8b-8192", "api_key": "...", "api_type": "groq"}]

Parameters under AutoGen's names, checked as AutoGen checked them (a wrong type or a value out
of bounds is the default, with a warning): ``frequency_penalty``, ``max_tokens``,
``presence_penalty``, ``seed``, ``stream``, ``temperature`` (1 by default), ``top_p``; also ``stop``, ``response_format``,
``tool_choice``, ``parallel_tool_calls``, and AutoGen's ``hide_tools``. ``base_url`` is the
API's root (the SDK posts to ``/openai/v1/chat/completions`` below it; a ``.../openai/v1``
given as OpenAI clients take it works too).
"""

from __future__ import annotations

from typing import ClassVar

from ._openai_compatible import OpenAICompatibleClient
from ._params import Param

__all__ = ["GroqClient"]


class GroqClient(OpenAICompatibleClient):
    """The ModelClient of ``api_type: "groq"``."""

    PROVIDER: ClassVar[str] = "groq"
    PATH: ClassVar[tuple[str, ...]] = ("/openai/v1",)
    LABEL: ClassVar[str] = "Groq"
    # response_format as given: json_schema on the models Groq lists, json_object on all.
    STRUCTURED_OUTPUT: ClassVar[str] = "native"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("frequency_penalty", (int, float), bounds=(-2, 2)),
        Param("max_tokens", int, bounds=(0, None)),
        Param("presence_penalty", (int, float), bounds=(-2, 2)),
        Param("seed", int),
        Param("stream", bool, default=False),
        Param("temperature", (int, float), default=1, bounds=(0, 2)),
        Param("top_p", (int, float)),
    )


PRICES = GroqClient.PRICES  # its table in prices.json, at AutoGen's module path too
