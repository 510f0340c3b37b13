"""AutoGen's path ``autogen.oai.cerebras``: the client of models served by Cerebras.

The client lives in :mod:`parley.oai.providers.cerebras`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so a
test that patches ``parley.oai.cerebras.CerebrasClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``CerebrasClient.create``) works from either path: it is one class.
"""

from .providers._openai_compatible import COMMON_PARAMS as COMMON_PARAMS
from .providers.cerebras import PRICES as PRICES
from .providers.cerebras import CerebrasClient

__all__ = ["CerebrasClient", "calculate_cerebras_cost"]


def calculate_cerebras_cost(input_tokens: int, output_tokens: int, model: str) -> float:
    """AutoGen's cost of a Cerebras reply: USD for the tokens by parley's price table
    (``CerebrasClient.PRICES``); 0 with a ``UserWarning`` for a model it does not know."""
    return CerebrasClient.token_cost(input_tokens, output_tokens, model)
