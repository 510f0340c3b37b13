"""AutoGen's ``OpenAIWrapper._clients`` and ``_config_list``, as its tests read them."""

from __future__ import annotations

import parley as autogen
from parley.oai.client import OpenAIWrapper, PlaceHolderClient
from tests.agentchat._group_clients import answering

EchoClient = answering("EchoClient", "echo")


def test_config_list_holds_the_entries_without_client_settings() -> None:
    secret = "sk-not-to-be-seen-0123456789"
    wrapper = OpenAIWrapper(
        config_list=[
            {"model": "a", "api_key": secret, "base_url": "http://127.0.0.1:1/v1"},
            {"model": "b", "api_key": secret, "temperature": 0.3, "tags": ["x"]},
        ],
        max_tokens=50,
    )
    assert wrapper._config_list == [
        {"max_tokens": 50, "model": "a"},
        {"max_tokens": 50, "model": "b", "temperature": 0.3, "tags": ["x"]},
    ]
    assert secret not in repr(wrapper._config_list)
    assert secret not in repr(wrapper._clients)


def test_config_list_without_a_config_list_is_the_wrappers_own_keys() -> None:
    wrapper = OpenAIWrapper(model="m", api_key="sk-x", temperature=0)
    assert wrapper._config_list == [{"model": "m", "temperature": 0}]


def test_views_are_copies() -> None:
    config = {"model": "m", "model_client_cls": "EchoClient"}
    wrapper = OpenAIWrapper(config_list=[config])
    wrapper._config_list[0]["model"] = "changed"
    wrapper._clients.clear()
    assert wrapper._config_list == [config]
    assert len(wrapper._clients) == 1


def test_clients_show_a_placeholder_until_the_custom_client_is_registered() -> None:
    wrapper = OpenAIWrapper(config_list=[{"model": "m", "model_client_cls": "EchoClient"}])
    (placeholder,) = wrapper._clients
    assert isinstance(placeholder, PlaceHolderClient)
    assert placeholder.config["model_client_cls"] == "EchoClient"
    wrapper.register_model_client(EchoClient)
    (client,) = wrapper._clients
    assert isinstance(client, EchoClient)
    assert wrapper.extract_text_or_completion_object(
        wrapper.create(messages=[{"role": "user", "content": "hi"}])
    ) == ["echo"]


def test_speaker_selection_agent_gets_the_custom_client_and_config() -> None:
    # AutoGen's group-chat test reads both internals from the speaker-selection agent.
    llm_config = {"config_list": [{"model": "echo-model", "model_client_cls": "EchoClient"}]}
    group = autogen.GroupChat(
        agents=[],
        messages=[],
        max_round=3,
        select_speaker_auto_llm_config=llm_config,
        select_speaker_auto_model_client_cls=EchoClient,
    )
    _, selector = group._create_internal_agents(
        agents=[], messages=[], max_attempts=3, validate_speaker_name=(True, "x")
    )
    assert isinstance(selector.client._clients[0], EchoClient)
    assert selector.client._config_list == llm_config["config_list"]
