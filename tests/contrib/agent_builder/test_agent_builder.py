"""AgentBuilder on the fake server: build from scripted builder replies, save, load, library."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from parley import AssistantAgent, GroupChat, GroupChatManager, UserProxyAgent
from parley.agentchat.contrib.agent_builder import AgentBuilder, AgentBuilderError
from parley.io import IOScripted, IOStream
from parley.testing import FakeLLMServer

TASK = "Find a recent paper about GPT-4 and explain its potential applications in software."


@pytest.fixture
def config_env(fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> str:
    """OAI_CONFIG_LIST (as JSON in the variable): a builder model and an agent model."""
    configs = [
        *fake_llm.config_list("builder-model", tags=["builder"]),
        *fake_llm.config_list("agent-model", tags=["agent"]),
    ]
    monkeypatch.setenv("OAI_CONFIG_LIST", json.dumps(configs))
    return "OAI_CONFIG_LIST"


@pytest.fixture(autouse=True)
def quiet() -> Any:
    with IOStream.set_default(IOScripted()) as io:
        yield io


def script_build(fake_llm: FakeLLMServer, coding: str | None = "YES") -> None:
    fake_llm.add_reply("Researcher_Expert, Software Engineer_Expert")
    fake_llm.add_reply("## Your role\nResearcher_Expert finds papers.")
    fake_llm.add_reply("## Your role\nSoftware_Engineer_Expert applies them.")
    fake_llm.add_reply("A researcher who finds papers.")
    fake_llm.add_reply("An engineer who applies research.")
    if coding is not None:
        fake_llm.add_reply(coding)


def builder(config_env: str, **kwargs: Any) -> AgentBuilder:
    kwargs.setdefault("builder_model_tags", ["builder"])
    kwargs.setdefault("agent_model_tags", ["agent"])
    return AgentBuilder(config_file_or_env=config_env, **kwargs)


def test_build_asks_the_builder_model(fake_llm: FakeLLMServer, config_env: str) -> None:
    script_build(fake_llm)
    b = builder(config_env, max_agents=3)
    agents, configs = b.build(
        TASK, {"temperature": 0}, code_execution_config={"use_docker": False, "work_dir": "team"}
    )

    assert [a.name for a in agents] == [
        "Researcher_Expert",
        "Software_Engineer_Expert",
        "Computer_terminal",
    ]
    researcher, engineer, terminal = agents
    assert isinstance(researcher, AssistantAgent)
    assert isinstance(terminal, UserProxyAgent)
    assert researcher.description == "A researcher who finds papers."
    assert engineer.description == "An engineer who applies research."
    assert "**Your role is**: Researcher_Expert" in researcher.system_message
    assert "Researcher_Expert finds papers." in researcher.system_message
    assert "Computer_terminal" in researcher.system_message
    assert "['Researcher_Expert', 'Software_Engineer_Expert']" in researcher.system_message
    # Every builder request went to the builder model, with the task in its prompts.
    requests = fake_llm.requests
    assert len(requests) == 6
    assert {r["model"] for r in requests} == {"builder-model"}
    assert "at most 3 experts" in requests[0]["messages"][0]["content"]
    assert TASK in requests[1]["messages"][0]["content"]
    assert "Software_Engineer_Expert" in requests[2]["messages"][0]["content"]
    assert "Answer only YES or NO" in requests[5]["messages"][0]["content"]
    assert researcher.llm_config["config_list"][0]["model"] == "agent-model"
    assert researcher.llm_config["temperature"] == 0
    assert configs["coding"] is True
    assert configs["agent_configs"][0] == {
        "name": "Researcher_Expert",
        "model": [],
        "tags": ["agent"],
        "system_message": "## Your role\nResearcher_Expert finds papers.",
        "description": "A researcher who finds papers.",
    }


def test_no_coding_means_no_terminal(fake_llm: FakeLLMServer, config_env: str) -> None:
    script_build(fake_llm, coding="NO")
    agents, configs = builder(config_env).build(TASK, {})
    assert [a.name for a in agents] == ["Researcher_Expert", "Software_Engineer_Expert"]
    assert configs["coding"] is False


def test_save_and_load_without_model_calls(
    fake_llm: FakeLLMServer, config_env: str, tmp_path: Path
) -> None:
    script_build(fake_llm, coding=None)
    first = builder(config_env)
    llm_config = {"temperature": 0, "config_list": fake_llm.config_list("agent-model")}
    built, _ = first.build(TASK, llm_config, coding=False)
    path = first.save(str(tmp_path / "team.json"))
    saved = json.loads(Path(path).read_text())
    assert "config_list" not in saved["default_llm_config"]  # no API key written
    assert "sk-" not in Path(path).read_text()
    assert llm_config["config_list"]  # the caller's config is untouched

    calls = len(fake_llm.requests)
    fresh = builder(config_env)
    loaded, configs = fresh.load(path)
    assert len(fake_llm.requests) == calls
    assert [a.name for a in loaded] == [a.name for a in built]
    assert [a.system_message for a in loaded] == [a.system_message for a in built]
    assert [a.description for a in loaded] == [a.description for a in built]
    assert configs["building_task"] == TASK

    again, _ = builder(config_env).load(config_json=json.dumps(saved))
    assert [a.name for a in again] == [a.name for a in built]


def test_clear_all_agents(fake_llm: FakeLLMServer, config_env: str, quiet: IOScripted) -> None:
    script_build(fake_llm, coding=None)
    b = builder(config_env)
    b.build(TASK, {}, coding=False)
    b.clear_all_agents()
    assert "All agents have been cleared." in quiet.text
    # A new team does not keep the old members.
    fake_llm.add_reply("Poet_Expert")
    fake_llm.add_reply("Writes poems.")
    fake_llm.add_reply("A poet.")
    agents, _ = b.build("write a poem", {}, coding=False)
    assert [a.name for a in agents] == ["Poet_Expert"]


def test_missing_models_fail_clearly(fake_llm: FakeLLMServer, config_env: str) -> None:
    with pytest.raises(AgentBuilderError, match="no builder model"):
        AgentBuilder(config_file_or_env=config_env, builder_model="gpt-nope")
    b = builder(config_env, agent_model="gpt-nope")
    with pytest.raises(AgentBuilderError, match="cannot create agent"):
        b.load(
            config_json=json.dumps(
                {
                    "building_task": "t",
                    "agent_configs": [
                        {
                            "name": "A",
                            "model": ["gpt-nope"],
                            "system_message": "s",
                            "description": "d",
                        }
                    ],
                    "coding": False,
                    "default_llm_config": {},
                    "code_execution_config": {},
                }
            )
        )
    with pytest.raises(AssertionError, match='Missing "coding"'):
        b.load(config_json=json.dumps({"agent_configs": [], "default_llm_config": {}}))
    with pytest.raises(ValueError, match="filepath or config_json"):
        b.load()


LIBRARY = [
    {
        "name": "Poet",
        "description": "Writes poems, verses and song lyrics.",
        "system_message": "You are a poet.",
    },
    {
        "name": "Python_Programmer",
        "description": "Writes and debugs Python code and software programs.",
        "system_message": "You write Python.",
    },
    {
        "name": "Chef",
        "description": "Cooks recipes, food and meals in a kitchen.",
        "system_message": "You cook.",
    },
    {
        "name": "Statistician",
        "description": "Analyses data with statistics, regression and probability.",
        "system_message": "You do statistics.",
    },
]


def test_build_from_library(fake_llm: FakeLLMServer, config_env: str, tmp_path: Path) -> None:
    path = tmp_path / "library.json"
    path.write_text(json.dumps(LIBRARY))
    programmer = LIBRARY[1]
    fake_llm.add_reply(
        "Here you go:\n```json\n{\n"
        f'  "write python code": "Python_Programmer: {programmer["description"]}",\n'
        '  "design a logo": "None"\n}\n```'
    )
    # The skill no library agent fits gets an agent of its own.
    fake_llm.add_reply("Logo_Designer_Expert")
    fake_llm.add_reply("You design logos.")
    fake_llm.add_reply("Designs logos.")
    task = "write python code\ndesign a logo"
    agents, configs = builder(config_env).build_from_library(
        task, str(path), {}, top_k=1, coding=False
    )

    assert [a.name for a in agents] == ["Python_Programmer", "Logo_Designer_Expert"]
    assert agents[0].description == programmer["description"]
    assert "You write Python." in agents[0].system_message
    selection_prompt = fake_llm.requests[0]["messages"][0]["content"]
    # With top_k=1 the offline embedding recalled the programmer for the code line; the
    # poet, chef and statistician are not in the pool.
    assert "Python_Programmer: Writes and debugs Python code" in selection_prompt
    assert "Chef" not in selection_prompt
    assert [c["name"] for c in configs["agent_configs"]] == [
        "Python_Programmer",
        "Logo_Designer_Expert",
    ]

    # From JSON text too, with a custom embedding function.
    fake_llm.add_reply('{"cook dinner": "Chef: Cooks recipes, food and meals in a kitchen."}')

    def embed(texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] if "cook" in t.lower() else [0.0, 1.0] for t in texts]

    team, _ = builder(config_env).build_from_library(
        "cook dinner", json.dumps(LIBRARY), {}, top_k=1, coding=False, embedding_model=embed
    )
    assert [a.name for a in team] == ["Chef"]


def test_library_selection_not_json_is_retried_then_fails(
    fake_llm: FakeLLMServer, config_env: str
) -> None:
    for _ in range(3):
        fake_llm.add_reply("I think the poet.")
    with pytest.raises(AgentBuilderError, match="no usable selection in 3 attempts"):
        builder(config_env).build_from_library("a poem", json.dumps(LIBRARY), {}, coding=False)


def test_group_chat_with_the_built_team(fake_llm: FakeLLMServer, config_env: str) -> None:
    script_build(fake_llm, coding=None)
    b = builder(config_env)
    agents, _ = b.build(TASK, {"temperature": 0}, coding=False)
    group = GroupChat(
        agents=agents, messages=[], max_round=6, speaker_selection_method="round_robin"
    )
    manager = GroupChatManager(
        group,
        llm_config=False,
        is_termination_msg=lambda m: "TERMINATE" in (m.get("content") or ""),
    )
    fake_llm.add_reply("I found the GPT-4 technical report.")
    fake_llm.add_reply("It can write and review code. TERMINATE")
    result = agents[0].initiate_chat(manager, message=TASK)
    assert [m["name"] for m in group.messages] == [
        "Researcher_Expert",
        "Software_Engineer_Expert",
        "Researcher_Expert",
    ]
    assert result.chat_history[-1]["content"].endswith("TERMINATE")
    # The experts spoke with their built system messages, on the agent model.
    request = fake_llm.requests[-2]
    assert request["model"] == "agent-model"
    assert request["messages"][0]["content"].startswith("# Group chat instruction")
    assert "**Your role is**: Software_Engineer_Expert" in request["messages"][0]["content"]


class Reviewer(AssistantAgent):
    """A custom member class, named by an agent config's model_path."""


def test_model_path_and_extra_agent_arguments(fake_llm: FakeLLMServer, config_env: str) -> None:
    team = {
        "building_task": "review",
        "agent_configs": [
            {
                "name": "Reviewer_Expert",
                "model": ["agent-model"],
                "model_path": f"{__name__}.Reviewer",
                "max_consecutive_auto_reply": 2,
                "system_message": "",
                "description": "Reviews.",
            }
        ],
        "coding": False,
        "default_llm_config": {"temperature": 0.5},
        "code_execution_config": {"use_docker": False},
    }
    (agent,), _ = builder(config_env).load(config_json=json.dumps(team))
    assert type(agent) is Reviewer
    assert agent.max_consecutive_auto_reply() == 2
    # An empty system message keeps the class's default inside the group-chat instruction.
    assert "You are a helpful AI assistant." in agent.system_message
    assert fake_llm.requests == []


def test_terminal_runs_code_where_parley_does(fake_llm: FakeLLMServer, config_env: str) -> None:
    script_build(fake_llm)
    agents, configs = builder(config_env).build(TASK, {})
    terminal = agents[-1]
    # No use_docker in the default config: parley's default (Docker), not AutoGen's host run.
    assert configs["code_execution_config"] == {
        "last_n_messages": 1,
        "work_dir": "groupchat",
        "timeout": 10,
    }
    assert terminal.name == "Computer_terminal"
    assert terminal.description.startswith("A computer terminal")
    assert terminal._is_termination_msg("TERMINATE")


def test_custom_user_proxy_and_oai_assistant(fake_llm: FakeLLMServer, config_env: str) -> None:
    script_build(fake_llm)
    mine = UserProxyAgent("me", code_execution_config=False, human_input_mode="NEVER")
    agents, _ = builder(config_env).build(TASK, {}, user_proxy=mine)
    assert agents[-1] is mine
    script_build(fake_llm, coding=None)
    with pytest.raises(NotImplementedError, match="GPTAssistantAgent"):
        builder(config_env).build(TASK, {}, coding=False, use_oai_assistant=True)


def test_switching_models(fake_llm: FakeLLMServer, config_env: str) -> None:
    b = builder(config_env, agent_model_tags=[])
    b.set_builder_model("agent-model")
    b.set_agent_model("builder-model")
    fake_llm.add_reply("Poet_Expert")
    fake_llm.add_reply("Writes poems.")
    fake_llm.add_reply("A poet.")
    (poet,), configs = b.build("a poem", {}, coding=False)
    assert {r["model"] for r in fake_llm.requests} == {"agent-model"}
    assert poet.llm_config["config_list"][0]["model"] == "builder-model"
    assert configs["agent_configs"][0]["model"] == ["builder-model"]
    with pytest.raises(AgentBuilderError, match="no builder model 'nope'"):
        b.set_builder_model("nope")
