"""AgentBuilder's agents: checking a team config and creating its members from it."""

from __future__ import annotations

import copy
import importlib
import logging
from typing import TYPE_CHECKING, Any

from ...exceptions import AgentBuilderError
from ...oai import config_list_from_json
from ..assistant_agent import AssistantAgent
from ..conversable_agent import ConversableAgent
from ..user_proxy_agent import UserProxyAgent

if TYPE_CHECKING:
    from .agent_builder import AgentBuilder

__all__ = ["AgentBuilderError", "as_list", "computer_terminal", "config_check", "create_agent"]

logger = logging.getLogger(__name__)

# The keys of an agent config that are not constructor arguments of the agent's class.
_AGENT_KEYS = ("model", "name", "system_message", "description", "model_path", "tags")


def config_check(config: dict[str, Any]) -> None:
    """AutoGen's checks of a team config (``AssertionError`` naming the missing key)."""
    for key in ("coding", "default_llm_config", "code_execution_config"):
        if config.get(key) is None:
            raise AssertionError(f'Missing "{key}" in your config.')
    for agent_config in config.get("agent_configs", []):
        for key in ("name", "system_message", "description"):
            if agent_config.get(key) is None:
                raise AssertionError(f'Missing agent "{key}" in your agent_configs.')


def as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _is_terminal_termination(message: Any) -> bool:
    return message in ("TERMINATE", "TERMINATE.")


def agent_class(model_path: str | None) -> type[ConversableAgent]:
    """The class named by an agent config's ``model_path`` (``package.module.Class``), else
    ``AssistantAgent``."""
    if not model_path:
        return AssistantAgent
    module_path, class_name = model_path.replace("/", ".").rsplit(".", 1)
    cls = getattr(importlib.import_module(module_path), class_name)
    if isinstance(cls, type) and issubclass(cls, ConversableAgent):
        return cls
    logger.error("%s is not a ConversableAgent; AssistantAgent is used instead", model_path)
    return AssistantAgent


def create_agent(
    builder: AgentBuilder,
    agent_config: dict[str, Any],
    member_name: list[str],
    llm_config: dict[str, Any],
    use_oai_assistant: bool = False,
) -> ConversableAgent:
    """One member: its model from the config list (filtered by the config's model and tags),
    its system message inside the group-chat instruction."""
    name = agent_config["name"]
    if use_oai_assistant:
        raise NotImplementedError(
            f"{name}: use_oai_assistant=True needs GPTAssistantAgent (OpenAI's Assistants "
            "API), which parley does not provide; build with use_oai_assistant=False"
        )
    models = [m for m in as_list(agent_config.get("model") or []) if m]
    tags = list(agent_config.get("tags") or [])
    filter_dict: dict[str, Any] = {}
    if models:
        filter_dict["model"] = models
    if tags:
        filter_dict["tags"] = tags
    config_list = config_list_from_json(
        builder.config_file_or_env,
        file_location=builder.config_file_location,
        filter_dict=filter_dict,
    )
    if not config_list:
        raise AgentBuilderError(
            f"cannot create agent {name}: no model {models}{tags} in "
            f"{builder.config_file_or_env}; give agent_model (or the agent config's model) "
            "matching an entry of the config list"
        )
    current = copy.deepcopy(llm_config)
    current["config_list"] = config_list
    extra = {k: v for k, v in agent_config.items() if k not in _AGENT_KEYS}
    cls = agent_class(agent_config.get("model_path"))
    agent = cls(name=name, llm_config=current, description=agent_config["description"], **extra)

    system_message = agent_config["system_message"]
    if system_message == "":
        system_message = agent.system_message
    else:
        system_message = f"{system_message}\n\n{builder.CODING_AND_TASK_SKILL_INSTRUCTION}"
    proxy_desc = ""
    if builder.cached_configs.get("coding") is True:
        proxy_desc = (
            "\nThe group also includes a Computer_terminal that runs your Python and shell code."
        )
    agent.update_system_message(
        builder.GROUP_CHAT_DESCRIPTION.format(
            name=name, members=member_name, user_proxy_desc=proxy_desc, sys_msg=system_message
        )
    )
    builder.agent_procs_assign[name] = (agent, builder.online_server_name)
    return agent


def computer_terminal(builder: AgentBuilder) -> UserProxyAgent:
    """The user proxy that runs the team's code, as the team config's
    ``code_execution_config`` says (Docker unless it says ``"use_docker": False``)."""
    return UserProxyAgent(
        name="Computer_terminal",
        is_termination_msg=_is_terminal_termination,
        code_execution_config=copy.deepcopy(builder.cached_configs["code_execution_config"]),
        human_input_mode="NEVER",
        default_auto_reply=builder.DEFAULT_PROXY_AUTO_REPLY,
        description=builder.DEFAULT_COMPUTER_TERMINAL_DESCRIPTION,
    )
