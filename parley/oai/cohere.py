"""AutoGen's path ``autogen.oai.cohere``: the client of Cohere's Command models.

The client lives in :mod:`parley.oai.providers.cohere`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so a
test that patches ``parley.oai.cohere.CohereClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``CohereClient.create``) works from either path: it is one class.
"""

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from .providers._cohere_v1 import v1_messages
from .providers.cohere import PRICES as PRICES
from .providers.cohere import CohereClient
from .providers.cohere import request_of as request_of
from .providers.cohere import to_messages as to_messages

__all__ = ["CohereClient", "calculate_cohere_cost", "oai_messages_to_cohere_messages"]


def calculate_cohere_cost(input_tokens: int, output_tokens: int, model: str) -> float:
    """AutoGen's cost of a Cohere reply: USD for the tokens by parley's price table
    (``CohereClient.PRICES``); 0 with a ``UserWarning`` for a model it does not know."""
    return CohereClient.token_cost(input_tokens, output_tokens, model)


def oai_messages_to_cohere_messages(
    messages: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
    cohere_params: MutableMapping[str, Any],
) -> tuple[list[dict[str, Any]], str, str]:
    """AutoGen's conversion, in the shape of Cohere's chat **v1** API it returned:
    ``(chat_history, preamble, message)`` — ``USER`` / ``CHATBOT`` turns of ``message`` text
    (names dropped; an assistant's tool calls a ``CHATBOT`` turn of its text), the system
    messages' text joined by newlines, and the last user message ("Please continue." when the
    conversation does not end with the user). As AutoGen's, it writes into ``cohere_params``:
    ``tools`` (v1 ``parameter_definitions``, every parameter required, an enum's values told in
    its description) when ``params`` has tools, and once tools have run their
    ``tool_results`` (``{"call": ..., "outputs": [{"value": ...}]}``) with
    ``force_single_step`` False, ``message`` "" and a final ``CHATBOT`` "Please continue."
    after a user turn. The v1 types AutoGen built (``ToolParameterDefinitionsValue``,
    ``ToolResult``) are plain dicts of their fields here.

    parley's ``CohereClient`` speaks chat v2 (OpenAI-like messages, :func:`to_messages`), so
    its own requests differ from this shape (README, Differences)."""
    return v1_messages(messages, params, cohere_params)
