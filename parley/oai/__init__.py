"""The completion client and config helpers (AutoGen's ``autogen.oai``)."""

from ..cache import Cache
from .client import ModelClient, OpenAIWrapper
from .completion import ChatCompletion, Completion
from .openai_utils import (
    config_list_from_dotenv,
    config_list_from_json,
    config_list_from_models,
    config_list_gpt4_gpt35,
    config_list_openai_aoai,
    filter_config,
    get_config_list,
)

__all__ = [
    "Cache",
    "ChatCompletion",
    "Completion",
    "ModelClient",
    "OpenAIWrapper",
    "config_list_from_dotenv",
    "config_list_from_json",
    "config_list_from_models",
    "config_list_gpt4_gpt35",
    "config_list_openai_aoai",
    "filter_config",
    "get_config_list",
]
