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


class GroqClient(OpenAICompatibleClient):
    """The ModelClient of ``api_type: "groq"``."""

    PROVIDER: ClassVar[str] = "groq"
    PATH: ClassVar[tuple[str, ...]] = ("/openai/v1",)
    PARAMS: ClassVar[Mapping[str, Any]] = dict.fromkeys(
        (*COMMON_PARAMS, "frequency_penalty", "presence_penalty", "parallel_tool_calls")
    )


PRICES = GroqClient.PRICES  # its table in prices.json, at AutoGen's module path too
