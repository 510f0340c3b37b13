"""AutoGen's path ``autogen.oai.anthropic``: the client of Anthropic's Claude models.

The client lives in :mod:`parley.oai.providers.anthropic`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so
a test that patches ``parley.oai.anthropic.AnthropicClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``AnthropicClient.create``) works from either path: it is one class.
"""

from collections.abc import Mapping
from typing import Any

from .providers._anthropic_messages import to_anthropic
from .providers.anthropic import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
from .providers.anthropic import PRICES as PRICES
from .providers.anthropic import AnthropicClient

__all__ = ["AnthropicClient", "oai_messages_to_anthropic_messages"]


def _calculate_cost(input_tokens: int, output_tokens: int, model: str) -> float:
    """AutoGen's cost of a Anthropic reply: USD for the tokens by parley's price table
    (``AnthropicClient.PRICES``); 0 with a ``UserWarning`` for a model it does not know."""
    return AnthropicClient.token_cost(input_tokens, output_tokens, model)


def oai_messages_to_anthropic_messages(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Anthropic ``messages`` ``AnthropicClient`` sends for ``params["messages"]``: system
    messages left out (they go to ``system``), turns alternating and starting and ending with
    the user ("Please continue." where needed), tool calls and results as ``tool_use`` /
    ``tool_result`` blocks when ``params`` has ``tools``, else as text. Unlike AutoGen's, it
    does not write the system text into ``params``."""
    return to_anthropic(params.get("messages") or [], with_tools="tools" in params)[1]
