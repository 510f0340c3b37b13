"""``AgentBuilder`` (AutoGen's ``autogen.agentchat.contrib.agent_builder``): a team of agents
built from a task description by a model.

``build`` asks the builder model for the experts' names, then a system message and a one-line
description for each, and whether the task needs code; the experts are ``AssistantAgent``s on
the agent model, told they work in a group chat, plus a ``Computer_terminal`` user proxy that
runs code when it does. ``build_from_library`` picks the experts from a library of agent
configs instead (recalled by embedding similarity, then matched by the builder model).
``save`` writes the team's config as JSON and ``load`` rebuilds the team from it without
asking any model.

Models come from a config list (``config_file_or_env``, read by ``config_list_from_json``),
filtered by ``builder_model``/``builder_model_tags`` for the builder and
``agent_model``/``agent_model_tags`` for the agents.

Differences from AutoGen: the ``Computer_terminal`` runs code as any parley user proxy does —
in Docker unless ``code_execution_config`` says ``"use_docker": False`` (AutoGen's default
config ran the team's code on the host); the library recall is offline (WordLlama); a builder
reply that is not JSON is asked again at most ``max_selection_attempts`` times (AutoGen retried
forever); a saved config leaves out ``default_llm_config``'s ``config_list`` (the agents'
models come from the config list anyway, and the file must not hold API keys).
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from typing import Any

from ...formatting_utils import colored
from ...io import IOStream
from ...oai import OpenAIWrapper, config_list_from_json
from ..conversable_agent import ConversableAgent
from . import _agent_builder_agents as _team
from . import _agent_builder_library as library
from ._agent_builder_prompts import BuilderTexts

__all__ = ["AgentBuilder", "AgentBuilderError"]

logger = logging.getLogger(__name__)

_DEFAULT_CODE_EXECUTION_CONFIG = {"last_n_messages": 1, "work_dir": "groupchat", "timeout": 10}
AgentBuilderError = _team.AgentBuilderError


class AgentBuilder(BuilderTexts):
    """Builds a team of agents for a task (see the module docstring)."""

    online_server_name = "online"
    max_selection_attempts = 3

    def __init__(
        self,
        config_file_or_env: str | None = "OAI_CONFIG_LIST",
        config_file_location: str | None = "",
        builder_model: str | list[str] | None = [],  # noqa: B006 - AutoGen's signature; never mutated
        agent_model: str | list[str] | None = [],  # noqa: B006
        builder_model_tags: list[str] | None = [],  # noqa: B006
        agent_model_tags: list[str] | None = [],  # noqa: B006
        max_agents: int | None = 5,
    ) -> None:
        self.config_file_or_env = config_file_or_env or "OAI_CONFIG_LIST"
        self.config_file_location = config_file_location
        builder_filter: dict[str, Any] = {}
        if builder_model:
            builder_filter["model"] = _team.as_list(builder_model)
        if builder_model_tags:
            builder_filter["tags"] = list(builder_model_tags)
        builder_configs = config_list_from_json(
            self.config_file_or_env, file_location=config_file_location, filter_dict=builder_filter
        )
        if not builder_configs:
            raise AgentBuilderError(
                f"no builder model {builder_filter or ''} in {self.config_file_or_env}: give "
                "builder_model (or builder_model_tags) matching an entry of the config list"
            )
        self.builder_model = OpenAIWrapper(config_list=builder_configs)
        self.agent_model: list[str] = _team.as_list(agent_model) if agent_model else []
        self.agent_model_tags: list[str] = list(agent_model_tags or [])
        self.max_agents = max_agents if max_agents is not None else 5
        self.building_task: str | None = None
        self.agent_configs: list[dict[str, Any]] = []
        self.open_ports: list[str] = []
        self.agent_procs: dict[str, Any] = {}
        self.agent_procs_assign: dict[str, tuple[ConversableAgent, str]] = {}
        self.cached_configs: dict[str, Any] = {}

    def set_builder_model(self, model: str) -> None:
        """Ask ``model`` (an entry of the config list) from now on. (AutoGen stored the name in
        place of the client, so the next build failed.)"""
        configs = config_list_from_json(
            self.config_file_or_env,
            file_location=self.config_file_location,
            filter_dict={"model": [model]},
        )
        if not configs:
            raise AgentBuilderError(f"no builder model {model!r} in {self.config_file_or_env}")
        self.builder_model = OpenAIWrapper(config_list=configs)

    def set_agent_model(self, model: str) -> None:
        """Build the next agents on ``model`` (an entry of the config list)."""
        self.agent_model = [model]

    # -- asking the builder model ---------------------------------------------------------

    def _ask(self, content: str) -> str:
        response = self.builder_model.create(messages=[{"role": "user", "content": content}])
        text = self.builder_model.extract_text_or_completion_object(response)[0]
        if not isinstance(text, str):
            raise AgentBuilderError(f"the builder model answered without text: {text!r}")
        return text

    def _print(self, text: str, color: str | None = None) -> None:
        IOStream.get_default().print(colored(text, color) if color else text, flush=True)

    def _decide_coding(self, task: str, coding: bool | None) -> bool:
        if coding is not None:
            return coding
        return self._ask(self.CODING_PROMPT.format(task=task)).strip() == "YES"

    # -- building -------------------------------------------------------------------------

    def build(
        self,
        building_task: str,
        default_llm_config: dict[str, Any],
        coding: bool | None = None,
        code_execution_config: dict[str, Any] | None = None,
        use_oai_assistant: bool = False,
        user_proxy: ConversableAgent | None = None,
        max_agents: int | None = None,
        **kwargs: Any,
    ) -> tuple[list[ConversableAgent], dict[str, Any]]:
        """Ask the builder model for a team for ``building_task``; ``(agents, config)``."""
        if code_execution_config is None:
            code_execution_config = dict(_DEFAULT_CODE_EXECUTION_CONFIG)
        max_agents = max_agents if max_agents is not None else self.max_agents
        self.building_task = building_task

        self._print("==> Generating agents...", "green")
        reply = self._ask(self.AGENT_NAME_PROMPT.format(task=building_task, max_agents=max_agents))
        names = [n.strip().replace(" ", "_") for n in reply.split(",") if n.strip()]
        self._print(f"{names} are generated.")

        self._print("==> Generating system message...", "green")
        sys_msgs = []
        for name in names:
            self._print(f"Preparing system message for {name}")
            sys_msgs.append(
                self._ask(
                    self.AGENT_SYS_MSG_PROMPT.format(
                        task=building_task, position=name, default_sys_msg=self.DEFAULT_DESCRIPTION
                    )
                )
            )

        self._print("==> Generating description...", "green")
        descriptions = []
        for name, sys_msg in zip(names, sys_msgs, strict=True):
            self._print(f"Preparing description for {name}")
            descriptions.append(
                self._ask(self.AGENT_DESCRIPTION_PROMPT.format(position=name, sys_msg=sys_msg))
            )

        agent_configs = [
            {
                "name": name,
                "model": list(self.agent_model),
                "tags": list(self.agent_model_tags),
                "system_message": sys_msg,
                "description": description,
            }
            for name, sys_msg, description in zip(names, sys_msgs, descriptions, strict=True)
        ]
        coding = self._decide_coding(building_task, coding)
        self._cache(building_task, agent_configs, coding, default_llm_config, code_execution_config)
        return self._build_agents(use_oai_assistant, user_proxy=user_proxy, **kwargs)

    def build_from_library(
        self,
        building_task: str,
        library_path_or_json: str,
        default_llm_config: dict[str, Any],
        top_k: int = 3,
        coding: bool | None = None,
        code_execution_config: dict[str, Any] | None = None,
        use_oai_assistant: bool = False,
        embedding_model: Any = "all-mpnet-base-v2",
        user_proxy: ConversableAgent | None = None,
        **kwargs: Any,
    ) -> tuple[list[ConversableAgent], dict[str, Any]]:
        """Pick a team for ``building_task`` from an agent library (JSON text or file);
        skills no library agent fits get an agent built for them. ``embedding_model`` is a
        function from texts to vectors, or a name (then parley's offline WordLlama model)."""
        if code_execution_config is None:
            code_execution_config = dict(_DEFAULT_CODE_EXECUTION_CONFIG)
        library_agents = library.load_library(library_path_or_json)
        self.building_task = building_task

        self._print("==> Looking for suitable agents in the library...", "green")
        embed = library.embedding_function(embedding_model)
        recalled = library.recall_agents(building_task, library_agents, top_k, embed)
        expert_pool = [f"{a['name']}: {a['description']}" for a in recalled]
        selection = self._select(building_task, expert_pool)

        chosen: list[dict[str, Any]] = []
        picked: list[str] = []
        for skill, profile in selection.items():
            if profile.strip() == "None":
                _, built = self.build(
                    building_task=skill,
                    default_llm_config=copy.deepcopy(default_llm_config),
                    coding=False,
                    use_oai_assistant=use_oai_assistant,
                    max_agents=1,
                )
                new_config = built["agent_configs"][0]
                self.clear_agent(new_config["name"])
                chosen.append(new_config)
                continue
            if profile in picked:
                continue  # one agent, however many skills it covers
            picked.append(profile)
            name, _, description = profile.partition(":")
            for agent in recalled:
                if agent["name"] == name.strip() and agent["description"] == description.strip():
                    chosen.append(dict(agent))
        for agent in chosen:
            agent.setdefault("model", list(self.agent_model))
            agent.setdefault("tags", list(self.agent_model_tags))
        self._print(f"{[a['name'] for a in chosen]} are selected.")

        coding = self._decide_coding(building_task, coding)
        self.building_task = building_task
        self._cache(building_task, chosen, coding, default_llm_config, code_execution_config)
        return self._build_agents(use_oai_assistant, user_proxy=user_proxy, **kwargs)

    def _select(self, task: str, expert_pool: list[str]) -> dict[str, str]:
        prompt = self.AGENT_SELECTION_PROMPT.format(
            skills=task, expert_pool=expert_pool, max_agents=self.max_agents
        )
        error: Exception | None = None
        for _ in range(self.max_selection_attempts):
            try:
                return library.parse_selection(self._ask(prompt))
            except library.AgentLibraryError as exc:
                error = exc
                self._print(str(exc))
        raise AgentBuilderError(
            f"the builder model gave no usable selection in {self.max_selection_attempts} "
            f"attempts; last problem: {error}"
        ) from error

    def _cache(
        self,
        task: str,
        agent_configs: list[dict[str, Any]],
        coding: bool,
        default_llm_config: dict[str, Any],
        code_execution_config: dict[str, Any] | bool,
    ) -> None:
        self.cached_configs.update(
            {
                "building_task": task,
                "agent_configs": agent_configs,
                "coding": coding,
                "default_llm_config": copy.deepcopy(default_llm_config),
                "code_execution_config": copy.deepcopy(code_execution_config),
            }
        )
        _team.config_check(self.cached_configs)

    # -- creating the agents --------------------------------------------------------------

    def _build_agents(
        self,
        use_oai_assistant: bool = False,
        user_proxy: ConversableAgent | None = None,
        **kwargs: Any,
    ) -> tuple[list[ConversableAgent], dict[str, Any]]:
        configs = self.cached_configs["agent_configs"]
        members = [config["name"] for config in configs]
        self._print("==> Creating agents...", "green")
        for config in configs:
            self._print(f"Creating agent {config['name']}...")
            self._create_agent(
                dict(config), members, self.cached_configs["default_llm_config"], use_oai_assistant
            )
        agent_list = [agent for agent, _ in self.agent_procs_assign.values()]
        if self.cached_configs["coding"] is True:
            self._print("Adding user console proxy...")
            if user_proxy is None:
                user_proxy = _team.computer_terminal(self)
            agent_list = [*agent_list, user_proxy]
        return agent_list, copy.deepcopy(self.cached_configs)

    def _create_agent(
        self,
        agent_config: dict[str, Any],
        member_name: list[str],
        llm_config: dict[str, Any],
        use_oai_assistant: bool = False,
    ) -> ConversableAgent:
        return _team.create_agent(self, agent_config, member_name, llm_config, use_oai_assistant)

    # -- saving, loading, clearing --------------------------------------------------------

    def save(self, filepath: str | None = None) -> str:
        """Write the last built team's config as JSON (default
        ``./save_config_<md5 of the task>.json``); returns the path."""
        if not self.cached_configs:
            raise AgentBuilderError("nothing to save: build or load a team first")
        if filepath is None:
            digest = hashlib.md5(str(self.building_task).encode("utf-8")).hexdigest()
            filepath = f"./save_config_{digest}.json"
        saved = copy.deepcopy(self.cached_configs)
        saved["default_llm_config"].pop("config_list", None)
        with open(filepath, "w", encoding="utf-8") as f:
            json.dump(saved, f, indent=4)
        self._print(f"Building config saved to {filepath}", "green")
        return filepath

    def load(
        self,
        filepath: str | None = None,
        config_json: str | None = None,
        use_oai_assistant: bool = False,
        **kwargs: Any,
    ) -> tuple[list[ConversableAgent], dict[str, Any]]:
        """Rebuild a saved team (from ``filepath`` or the JSON text ``config_json``) without
        asking any model; a ``code_execution_config`` keyword replaces the saved one."""
        if filepath is not None:
            self._print(f"Loading config from {filepath}", "green")
            with open(filepath, encoding="utf-8") as f:
                cached = json.load(f)
        elif config_json is not None:
            self._print("Loading config from JSON...", "green")
            cached = json.loads(config_json)
        else:
            raise ValueError("You must provide either filepath or config_json.")
        _team.config_check(cached)
        code_execution_config = kwargs.pop("code_execution_config", None)
        if code_execution_config is None:
            code_execution_config = cached["code_execution_config"]
        self.building_task = cached.get("building_task")
        self._cache(
            cached.get("building_task"),
            cached["agent_configs"],
            cached["coding"],
            cached["default_llm_config"],
            code_execution_config,
        )
        return self._build_agents(use_oai_assistant, **kwargs)

    def clear_agent(self, agent_name: str, recycle_endpoint: bool | None = True) -> None:
        """Forget the built agent ``agent_name``."""
        del self.agent_procs_assign[agent_name]
        self._print(f"Agent {agent_name} has been cleared.")

    def clear_all_agents(self, recycle_endpoint: bool | None = True) -> None:
        """Forget every built agent (the next build starts an empty team)."""
        for name in list(self.agent_procs_assign):
            self.clear_agent(name, recycle_endpoint)
        self._print("All agents have been cleared.", "yellow")
