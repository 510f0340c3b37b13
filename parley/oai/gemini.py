"""AutoGen's path ``autogen.oai.gemini``: the client of Google's Gemini models.

The client lives in :mod:`parley.oai.providers.gemini`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so a
test that patches ``parley.oai.gemini.GeminiClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``GeminiClient.create``) works from either path: it is one class.
"""

from .providers.gemini import PRICES as PRICES
from .providers.gemini import GeminiClient

__all__ = ["GeminiClient", "calculate_gemini_cost"]


def calculate_gemini_cost(input_tokens: int, output_tokens: int, model_name: str) -> float:
    """AutoGen's cost of a Gemini reply: USD for the tokens by parley's price table
    (``GeminiClient.PRICES``); 0 with a ``UserWarning`` for a model it does not know."""
    return GeminiClient.token_cost(input_tokens, output_tokens, model_name)
