"""AutoGen's path ``autogen.oai.anthropic``: the client of Anthropic's Claude models.

The client lives in :mod:`parley.oai.providers.anthropic`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so
a test that patches ``parley.oai.anthropic.AnthropicClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``AnthropicClient.create``) works from either path: it is one class.
"""

from .providers.anthropic import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
from .providers.anthropic import PRICES as PRICES
from .providers.anthropic import AnthropicClient

__all__ = ["AnthropicClient"]


def _calculate_cost(input_tokens: int, output_tokens: int, model: str) -> float:
    """AutoGen's cost of a Anthropic reply: USD for the tokens by parley's price table
    (``AnthropicClient.PRICES``); 0 with a ``UserWarning`` for a model it does not know."""
    return AnthropicClient.token_cost(input_tokens, output_tokens, model)
