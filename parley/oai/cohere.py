"""AutoGen's path ``autogen.oai.cohere``: the client of Cohere's Command models.

The client lives in :mod:`parley.oai.providers.cohere`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so a
test that patches ``parley.oai.cohere.CohereClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``CohereClient.create``) works from either path: it is one class.
"""

from .providers.cohere import PRICES as PRICES
from .providers.cohere import CohereClient
from .providers.cohere import request_of as request_of
from .providers.cohere import to_messages as to_messages

__all__ = ["CohereClient", "calculate_cohere_cost"]


def calculate_cohere_cost(input_tokens: int, output_tokens: int, model: str) -> float:
    """AutoGen's cost of a Cohere reply: USD for the tokens by parley's price table
    (``CohereClient.PRICES``); 0 with a ``UserWarning`` for a model it does not know."""
    return CohereClient.token_cost(input_tokens, output_tokens, model)
