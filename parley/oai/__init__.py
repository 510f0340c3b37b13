"""The completion client and config helpers (AutoGen's ``autogen.oai``).

- ``client``: ``OpenAIWrapper``, one completion call across a config list, through small
  layers (``_layers``: cache, price, rate limit, retry; ``_fallback``: the next config on
  errors), each config entry checked once into a typed ``Entry`` (``_config``) and served by
  its ``_slot``;
- ``model_client``: the ``ModelClient`` protocol a client of your own implements;
- typed structured output: ``OutputSchema`` (``_structured``, made once from a
  ``response_format``), replies checked and asked again with the problems shown
  (``_typed_reply``; plain schema dicts checked by the ``jsonschema`` library, in
  ``_schema_validator``);
- ``providers/``: the model clients, one per API (OpenAI and Azure, Anthropic, Gemini, ...);
- ``legacy/``: AutoGen/FLAML's ``Completion``, ``ChatCompletion`` and ``tune``;
- ``openai_utils`` and ``_config_lists``: loading and filtering config lists;
  ``rate_limiters``: AutoGen's rate limiters; ``client_utils``: AutoGen's helpers for writing
  a model client (``validate_parameter``, ``should_hide_tools``);
- AutoGen's module paths of what lives in the folders (``anthropic``, ``gemini``, ...,
  ``completion``): modules naming those objects, kept for AutoGen 0.2 code.
"""

from ..cache import Cache
from . import _config_lists
from ._config_lists import *  # noqa: F403 - the config-list helpers, listed once, in _config_lists
from ._structured import OutputSchema
from .client import ModelClient, OpenAIWrapper
from .completion import (  # AutoGen's path, so parley.oai.completion is set
    ChatCompletion,
    Completion,
)

__all__ = ["Cache", "ChatCompletion", "Completion", "ModelClient", "OpenAIWrapper", "OutputSchema"]
__all__ += _config_lists.__all__
