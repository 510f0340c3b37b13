"""AutoGen's path ``autogen.oai.cerebras``: the client of models served by Cerebras.

The client lives in :mod:`parley.oai.providers.cerebras`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so a
test that patches ``parley.oai.cerebras.CerebrasClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``CerebrasClient.create``) works from either path: it is one class.
"""

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from .providers._openai_compatible import COMMON_PARAMS as COMMON_PARAMS
from .providers.cerebras import PRICES as PRICES
from .providers.cerebras import CerebrasClient

__all__ = ["CerebrasClient", "calculate_cerebras_cost", "oai_messages_to_cerebras_messages"]


def calculate_cerebras_cost(input_tokens: int, output_tokens: int, model: str) -> float:
    """AutoGen's cost of a Cerebras reply: USD for the tokens by parley's price table
    (``CerebrasClient.PRICES``); 0 with a ``UserWarning`` for a model it does not know."""
    return CerebrasClient.token_cost(input_tokens, output_tokens, model)


def oai_messages_to_cerebras_messages(
    messages: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """AutoGen's conversion: copies of ``messages`` without their ``name``. parley's
    ``CerebrasClient`` sends the messages as they are, names included (the API takes OpenAI's
    messages), so its requests differ from this result where a message has a name."""
    return [{k: v for k, v in m.items() if k != "name"} for m in copy.deepcopy(list(messages))]
