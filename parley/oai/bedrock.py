"""AutoGen's path ``autogen.oai.bedrock``: the client of models on Amazon Bedrock.

The client lives in :mod:`parley.oai.providers.bedrock`; this module names the same objects for
AutoGen 0.2 code, and it is the module a config entry's ``api_type`` loads the client from, so a
test that patches ``parley.oai.bedrock.BedrockClient`` changes the client ``OpenAIWrapper`` builds.
Patching a member (``BedrockClient.create``) works from either path: it is one class.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from .providers._bedrock_errors import PROVIDER as PROVIDER
from .providers._bedrock_messages import conversation, tool_config
from .providers._bedrock_replies import finish_reason
from .providers.bedrock import PRICES, BedrockClient, model_name

PRICES_PER_K_TOKENS = PRICES  # AutoGen's name of the table

__all__ = [
    "PRICES",
    "PRICES_PER_K_TOKENS",
    "BedrockClient",
    "calculate_cost",
    "convert_stop_reason_to_finish_reason",
    "extract_system_messages",
    "format_tools",
    "model_name",
    "oai_messages_to_bedrock_messages",
]


def calculate_cost(input_tokens: int, output_tokens: int, model_id: str) -> float:
    """AutoGen's cost of a Bedrock reply: USD for the tokens by parley's price table
    (``BedrockClient.PRICES``); 0 with a ``UserWarning`` for a model it does not know."""
    return BedrockClient.token_cost(input_tokens, output_tokens, model_id)


def oai_messages_to_bedrock_messages(
    messages: Sequence[Mapping[str, Any]], has_tools: bool, supports_system_prompts: bool
) -> list[dict[str, Any]]:
    """The Converse ``messages`` ``BedrockClient`` sends for OpenAI ``messages``: turns that
    alternate user and assistant ("Please continue." where two of a side meet, first and last
    turns the user's), names dropped; system messages left out for a model with system prompts
    (see :func:`extract_system_messages`), else sent as the user's; tool calls and results as
    blocks when the request ``has_tools``, else as text."""
    return conversation(messages, with_tools=has_tools, system_prompts=supports_system_prompts)[1]


def extract_system_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The Converse ``system`` blocks of ``messages``' system prompts (``[{"text": ...}]``); AutoGen
    kept the first only, parley sends them all."""
    return conversation(messages, with_tools=False)[0]


def format_tools(tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The Converse ``toolConfig`` (``{"tools": [{"toolSpec": ...}]}``) of OpenAI ``tools``;
    each function's JSON schema is sent whole."""
    return tool_config({"tools": list(tools)}) or {"tools": []}


def convert_stop_reason_to_finish_reason(stop_reason: str) -> str:
    """OpenAI's ``finish_reason`` for a Converse ``stopReason`` (``"tool_use"`` is
    ``"tool_calls"``, ``"max_tokens"`` is ``"length"``, ...)."""
    return finish_reason(stop_reason)
