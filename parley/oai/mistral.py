"""AutoGen's path ``autogen.oai.mistral``: the client of Mistral AI's models.

The client lives in :mod:`parley.oai.providers.mistral`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so a
test that patches ``parley.oai.mistral.MistralAIClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``MistralAIClient.create``) works from either path: it is one class.
"""

from .providers.mistral import PRICES as PRICES
from .providers.mistral import MistralAIClient
from .providers.mistral import mistral_messages as mistral_messages

__all__ = ["MistralAIClient", "calculate_mistral_cost"]


def calculate_mistral_cost(input_tokens: int, output_tokens: int, model_name: str) -> float:
    """AutoGen's cost of a Mistral reply: USD for the tokens by parley's price table
    (``MistralAIClient.PRICES``); 0 with a ``UserWarning`` for a model it does not know."""
    return MistralAIClient.token_cost(input_tokens, output_tokens, model_name)
