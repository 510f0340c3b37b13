"""AutoGen's path ``autogen.oai.cerebras``: the client of models served by Cerebras.

The client lives in :mod:`parley.oai.providers.cerebras`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so a
test that patches ``parley.oai.cerebras.CerebrasClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``CerebrasClient.create``) works from either path: it is one class.
"""

from .providers._openai_compatible import COMMON_PARAMS as COMMON_PARAMS
from .providers.cerebras import PRICES as PRICES
from .providers.cerebras import CerebrasClient

__all__ = ["CerebrasClient"]
