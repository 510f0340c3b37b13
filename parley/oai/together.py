"""AutoGen's path ``autogen.oai.together``: the client of models served by Together AI.

The client lives in :mod:`parley.oai.providers.together`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so a
test that patches ``parley.oai.together.TogetherClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``TogetherClient.create``) works from either path: it is one class.
"""

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from .providers._openai_compatible import COMMON_PARAMS as COMMON_PARAMS
from .providers.together import PRICES as PRICES
from .providers.together import TogetherClient

__all__ = ["TogetherClient", "calculate_together_cost", "oai_messages_to_together_messages"]


def calculate_together_cost(input_tokens: int, output_tokens: int, model_name: str) -> float:
    """AutoGen's cost of a Together reply: USD for the tokens by parley's price table
    (``TogetherClient.PRICES``); 0 with a ``UserWarning`` for a model it does not know."""
    return TogetherClient.token_cost(input_tokens, output_tokens, model_name)


def oai_messages_to_together_messages(
    messages: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """AutoGen's conversion: copies of ``messages`` with each tool result (role ``"tool"``)
    given the role ``"user"``. parley's ``TogetherClient`` sends tool results as ``tool`` messages
    (the API takes OpenAI's messages), so its requests differ from this result there."""
    copied = copy.deepcopy(list(messages))
    return [{**m, "role": "user"} if m.get("role") == "tool" else dict(m) for m in copied]
