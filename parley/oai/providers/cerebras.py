"""``CerebrasClient``: models served by Cerebras through the ``cerebras-cloud-sdk``
(``api_type: "cerebras"``), at the path AutoGen's later releases use (``autogen.oai.cerebras``).

::

    config_list = [{"model": "llama3.1-8b", "api_key": "...", "api_type": "cerebras"}]

Parameters under AutoGen's names, checked as AutoGen checked them (a wrong type or a value out
of bounds is the default, with a warning): ``max_tokens``, ``seed``, ``stream``,
``temperature`` (1 by default), ``top_p``; also ``stop``, ``response_format``, ``tool_choice``, ``parallel_tool_calls`` and
AutoGen's ``hide_tools``. ``base_url`` is the API's root (the SDK posts to
``/v1/chat/completions`` below it; a ``.../v1`` works too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ._openai_compatible import OpenAICompatibleClient
from ._params import Param

__all__ = ["CerebrasClient"]


class CerebrasClient(OpenAICompatibleClient):
    """The ModelClient of ``api_type: "cerebras"``."""

    PROVIDER: ClassVar[str] = "cerebras"
    SDK: ClassVar[str] = "cerebras.cloud.sdk"
    # The SDK's warm-up request at construction would be a request parley did not make.
    SETTINGS: ClassVar[Mapping[str, Any]] = {"warm_tcp_connection": False}
    LABEL: ClassVar[str] = "Cerebras"
    STRUCTURED_OUTPUT: ClassVar[str] = "native"  # response_format as given (json_schema)
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("max_tokens", int, bounds=(0, None)),
        Param("seed", int),
        Param("stream", bool, default=False),
        Param("temperature", (int, float), default=1, bounds=(0, 1.5)),
        Param("top_p", (int, float)),
    )


PRICES = CerebrasClient.PRICES  # its table in prices.json, at AutoGen's module path too
