"""Config validation at construction, templating, prompts and custom model clients."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import jinja2
import pytest

from parley.exceptions import ConfigError, ModelClientError
from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer

HI = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("kwargs", "fragments"),
    [
        (
            {"config_list": "OAI_CONFIG_LIST"},
            ["config_list must be a list", "config_list_from_json"],
        ),
        ({"config_list": [{"model": "a"}, "gpt-4"]}, ["config_list[1] must be a dict"]),
        (
            {"config_list": [{"model": "a"}, {"api_key": "k"}]},
            ["config_list[1]", "'model' is missing"],
        ),
        (
            {"config_list": [{"model": "a", "api_type": "azur"}]},
            ["config_list[0]", "api_type", "'azur'"],
        ),
        (
            {"config_list": [{"model": "a", "api_type": "claude"}]},
            ["config_list[0]", "unknown api_type 'claude'", "'anthropic'"],
        ),
        ({"config_list": [{"model": 4}]}, ["config_list[0]", "'model'"]),
        ({"config_list": [{"model": "a", "temperature": "hot"}]}, ["'temperature'", "'hot'"]),
        ({"config_list": [{"model": "a", "max_retries": -1}]}, ["'max_retries'"]),
        ({"config_list": [{"model": "a", "price": [1, 2, 3]}]}, ["'price'"]),
        ({"config_list": [{"model": "a"}], "timeout": 0}, ["llm_config", "'timeout'"]),
    ],
)
def test_malformed_configs_name_the_entry_and_field(
    kwargs: dict[str, Any], fragments: list[str]
) -> None:
    with pytest.raises(ConfigError) as info:
        OpenAIWrapper(**kwargs)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert isinstance(info.value, ValueError)  # what AutoGen code catches


def test_messages_xor_prompt(fake_llm: FakeLLMServer) -> None:
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    with pytest.raises(ValueError, match="Either prompt or messages"):
        client.create(messages=HI, prompt="x")
    with pytest.raises(ValueError, match="Either prompt or messages"):
        client.create(temperature=0)


def test_client_settings_in_create_are_refused(fake_llm: FakeLLMServer) -> None:
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    with pytest.raises(TypeError, match="api_key"):
        client.create(messages=HI, api_key="sk-x")


def test_prompt_becomes_a_user_message_and_is_templated(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda req: "ok"
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    client.create(prompt="Hi {name}", context={"name": "Bob"}, allow_format_str_template=True)
    assert fake_llm.last_request["messages"] == [{"role": "user", "content": "Hi Bob"}]
    client.create(prompt="Hi {name}", context={"name": "Bob"})  # not allowed: left as is
    assert fake_llm.last_request["messages"] == [{"role": "user", "content": "Hi {name}"}]


def test_message_templates_callables_and_jinja(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda req: "ok"
    client = OpenAIWrapper(config_list=fake_llm.config_list(), allow_format_str_template=True)
    messages = [
        {"role": "system", "content": "You help {user}."},
        {"role": "user", "content": lambda ctx: f"callable for {ctx['user']}"},
        {"role": "user", "content": jinja2.Template("jinja for {{ user }}")},
    ]
    client.create(messages=messages, context={"user": "Ann"})
    sent = [m["content"] for m in fake_llm.last_request["messages"]]
    assert sent == ["You help Ann.", "callable for Ann", "jinja for Ann"]
    assert messages[0]["content"] == "You help {user}."  # the caller's dicts are untouched


def test_missing_template_key_is_a_clear_error(fake_llm: FakeLLMServer) -> None:
    client = OpenAIWrapper(config_list=fake_llm.config_list(), allow_format_str_template=True)
    with pytest.raises(ValueError, match="'nmae'"):
        client.create(messages=[{"role": "user", "content": "Hi {nmae}"}], context={"name": "x"})


class EchoClient:
    """A custom ModelClient: answers with the last message reversed."""

    def __init__(self, config: dict[str, Any], **kwargs: Any) -> None:
        self.config = config
        self.kwargs = kwargs

    def create(self, params: dict[str, Any]) -> Any:
        text = params["messages"][-1]["content"][::-1]
        message = SimpleNamespace(content=text, tool_calls=None, function_call=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], model=params["model"])

    def message_retrieval(self, response: Any) -> list[str]:
        return [c.message.content for c in response.choices]

    def cost(self, response: Any) -> float:
        return 0.25

    @staticmethod
    def get_usage(response: Any) -> dict[str, Any]:
        return {
            "prompt_tokens": 1,
            "completion_tokens": 1,
            "total_tokens": 2,
            "cost": 0.25,
            "model": response.model,
        }


def test_custom_model_client() -> None:
    config_list = [
        {"model": "echo-1", "model_client_cls": "EchoClient", "api_key": "k"},
        {"model": "echo-2", "model_client_cls": "EchoClient"},
    ]
    client = OpenAIWrapper(config_list=config_list)
    with pytest.raises(ModelClientError, match="EchoClient"):
        client.create(messages=HI)
    client.register_model_client(EchoClient, flavour="x")
    with pytest.raises(RuntimeError, match="not activated"):  # the second entry needs its own call
        client.create(messages=HI)
    client.register_model_client(EchoClient)
    response = client.create(messages=[{"role": "user", "content": "abc"}])
    assert client.extract_text_or_completion_object(response) == ["cba"]
    assert response.cost == 0.25
    assert response.config_id == 0
    assert client.total_usage_summary == {
        "total_cost": 0.25,
        "echo-1": {"cost": 0.25, "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    with pytest.raises(ValueError, match='"model_client_cls": "str"'):
        client.register_model_client(str)


def test_custom_client_errors_propagate_at_once() -> None:
    class Broken(EchoClient):
        def create(self, params: dict[str, Any]) -> Any:
            raise KeyError("boom")

    client = OpenAIWrapper(
        config_list=[
            {"model": "a", "model_client_cls": "Broken"},
            {"model": "b", "model_client_cls": "Broken"},
        ]
    )
    client.register_model_client(Broken)
    client.register_model_client(Broken)
    with pytest.raises(KeyError, match="boom"):
        client.create(messages=HI)


def test_azure_through_the_openai_azure_client() -> None:
    with FakeLLMServer(api_key="az-key") as server:
        server.add_reply("azure says hi")
        client = OpenAIWrapper(
            config_list=[
                {
                    "model": "gpt-4.1",
                    "api_type": "azure",
                    "api_version": "2024-02-01",
                    "base_url": server.url,
                    "api_key": "az-key",
                }
            ]
        )
        response = client.create(messages=HI)
        assert response.choices[0].message.content == "azure says hi"
        rec = server.received[-1]
        assert rec.path == "/openai/deployments/gpt-41/chat/completions"  # dots removed, as AutoGen
        assert rec.query == "api-version=2024-02-01"
        assert rec.headers["api-key"] == "az-key"


def test_openai_kwargs_and_extra_kwargs_are_class_attributes() -> None:
    assert {"api_key", "base_url", "timeout", "max_retries"} <= OpenAIWrapper.openai_kwargs
    assert {"cache_seed", "filter_func", "price", "tags"} <= OpenAIWrapper.extra_kwargs


def test_pending_model_clients_in_config_order() -> None:
    class Other(EchoClient):
        pass

    config_list = [
        {"model": "a", "model_client_cls": "EchoClient"},
        {"model": "b", "api_key": "k"},
        {"model": "c", "model_client_cls": "Other"},
        {"model": "d", "model_client_cls": "EchoClient"},
    ]
    client = OpenAIWrapper(config_list=config_list)
    assert client.pending_model_clients() == ["EchoClient", "Other", "EchoClient"]
    client.register_model_client(EchoClient)
    assert client.pending_model_clients() == ["Other", "EchoClient"]
    client.register_model_client(Other)
    client.register_model_client(EchoClient)
    assert client.pending_model_clients() == []


def test_a_rebuilt_wrapper_adopts_the_registered_clients() -> None:
    old = OpenAIWrapper(
        config_list=[
            {"model": "a", "model_client_cls": "EchoClient"},
            {"model": "b", "model_client_cls": "EchoClient"},
        ]
    )
    old.register_model_client(EchoClient, flavour="first")
    # The same configs (a tool was added, say), and one that now names another class.
    new = OpenAIWrapper(
        config_list=[
            {"model": "a", "model_client_cls": "EchoClient"},
            {"model": "b", "model_client_cls": "Other"},
        ],
        temperature=0,
    )
    new.adopt_model_clients(old)
    assert new.pending_model_clients() == ["Other"]  # not registered in old, or another class
    again = OpenAIWrapper(config_list=[{"model": "a", "model_client_cls": "EchoClient"}])
    again.adopt_model_clients(old)
    assert again.pending_model_clients() == []
    response = again.create(messages=[{"role": "user", "content": "abc"}])
    assert again.extract_text_or_completion_object(response) == ["cba"]
