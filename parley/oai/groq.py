"""AutoGen's path ``autogen.oai.groq``: the client of models served by Groq.

The client lives in :mod:`parley.oai.providers.groq`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so a
test that patches ``parley.oai.groq.GroqClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``GroqClient.create``) works from either path: it is one class.
"""

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from .providers._openai_compatible import COMMON_PARAMS as COMMON_PARAMS
from .providers.groq import PRICES as PRICES
from .providers.groq import GroqClient

__all__ = ["GroqClient", "calculate_groq_cost", "oai_messages_to_groq_messages"]


def calculate_groq_cost(input_tokens: int, output_tokens: int, model: str) -> float:
    """AutoGen's cost of a Groq reply: USD for the tokens by parley's price table
    (``GroqClient.PRICES``); 0 with a ``UserWarning`` for a model it does not know."""
    return GroqClient.token_cost(input_tokens, output_tokens, model)


def oai_messages_to_groq_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """AutoGen's conversion: copies of ``messages`` without their ``name``. parley's
    ``GroqClient`` sends the messages as they are, names included (the API takes OpenAI's
    messages), so its requests differ from this result where a message has a name."""
    return [{k: v for k, v in m.items() if k != "name"} for m in copy.deepcopy(list(messages))]
