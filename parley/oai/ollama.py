"""AutoGen's path ``autogen.oai.ollama``: the client of local models served by Ollama.

The client lives in :mod:`parley.oai.providers.ollama`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so a
test that patches ``parley.oai.ollama.OllamaClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``OllamaClient.create``) works from either path: it is one class.
"""

from .providers.ollama import PRICES as PRICES
from .providers.ollama import OllamaClient

__all__ = ["OllamaClient"]
