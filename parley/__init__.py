"""parley: the AutoGen 0.2 programming model, rebuilt lean, fast and safe.

``import parley as autogen`` is meant to run AutoGen 0.2 code unchanged. Heavy dependencies
(openai, docker, redis, diskcache, pydantic, jinja2) are imported where they are used, not here.
"""

import logging

from .agentchat import (
    Agent,
    AssistantAgent,
    ChatResult,
    ConversableAgent,
    GroupChat,
    GroupChatManager,
    UserProxyAgent,
    gather_usage_summary,
    initiate_chats,
    register_function,
)
from .code_utils import DEFAULT_MODEL, FAST_MODEL
from .exceptions import (
    AgentNameConflict,
    InvalidCarryOverType,
    NoEligibleSpeaker,
    SenderRequired,
    UndefinedNextAgent,
)
from .oai import (
    Cache,
    ChatCompletion,
    Completion,
    ModelClient,
    OpenAIWrapper,
    config_list_from_dotenv,
    config_list_from_json,
    config_list_from_models,
    config_list_gpt4_gpt35,
    config_list_openai_aoai,
    filter_config,
    get_config_list,
)
from .version import __version__

__all__ = [
    "DEFAULT_MODEL",
    "FAST_MODEL",
    "Agent",
    "AgentNameConflict",
    "AssistantAgent",
    "Cache",
    "ChatCompletion",
    "ChatResult",
    "Completion",
    "ConversableAgent",
    "GroupChat",
    "GroupChatManager",
    "InvalidCarryOverType",
    "ModelClient",
    "NoEligibleSpeaker",
    "OpenAIWrapper",
    "SenderRequired",
    "UndefinedNextAgent",
    "UserProxyAgent",
    "__version__",
    "config_list_from_dotenv",
    "config_list_from_json",
    "config_list_from_models",
    "config_list_gpt4_gpt35",
    "config_list_openai_aoai",
    "filter_config",
    "gather_usage_summary",
    "get_config_list",
    "initiate_chats",
    "logger",
    "register_function",
]

# As in AutoGen: `autogen.logger` is the stdlib logger "autogen" (here "parley"), level INFO.
logger = logging.getLogger("parley")
logger.setLevel(logging.INFO)
