"""AutoGen's path ``autogen.oai.mistral``: the client of Mistral AI's models.

The client lives in :mod:`parley.oai.providers.mistral`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so a
test that patches ``parley.oai.mistral.MistralAIClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``MistralAIClient.create``) works from either path: it is one class.
"""

from .providers.mistral import PRICES as PRICES
from .providers.mistral import MistralAIClient
from .providers.mistral import mistral_messages as mistral_messages

__all__ = ["MistralAIClient"]
