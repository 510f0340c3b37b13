"""Model profiles: requests adapted to their model before sending, the strict fake server
refusing what the real API refuses, and cached / reasoning tokens priced as billed. Through the
real openai SDK against FakeLLMServer on loopback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import openai
import pytest

import parley as autogen
from parley.exceptions import ConfigError
from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer

HI = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
REASONING = ["o1", "o3", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5.1"]


def _sdk(server: FakeLLMServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=server.api_key or "sk-parley-fake")


@pytest.mark.parametrize("model", REASONING)
def test_the_strict_server_refuses_max_tokens_as_openai_does(
    fake_llm: FakeLLMServer, model: str
) -> None:
    with _sdk(fake_llm) as sdk, pytest.raises(openai.BadRequestError) as caught:
        sdk.chat.completions.create(model=model, messages=HI, max_tokens=50)  # type: ignore[arg-type]
    error = caught.value.body
    assert isinstance(error, dict)
    assert error["param"] == "max_tokens"
    assert error["code"] == "unsupported_parameter"
    assert "Use 'max_completion_tokens' instead." in error["message"]
    assert caught.value.status_code == 400


@pytest.mark.parametrize("value", [0, 0.2])
def test_the_strict_server_refuses_temperature_but_the_default(
    fake_llm: FakeLLMServer, value: float
) -> None:
    with _sdk(fake_llm) as sdk:
        with pytest.raises(openai.BadRequestError) as caught:
            sdk.chat.completions.create(model="o3", messages=HI, temperature=value)  # type: ignore[arg-type]
        error = caught.value.body
        assert isinstance(error, dict)
        assert (error["param"], error["code"]) == ("temperature", "unsupported_value")
        assert f"does not support {value} with this model" in error["message"]
        assert "Only the default (1) value is supported." in error["message"]
        fake_llm.add_reply("ok")
        reply = sdk.chat.completions.create(model="o3", messages=HI, temperature=1)  # type: ignore[arg-type]
        assert reply.choices[0].message.content == "ok"


def test_the_strict_server_refuses_system_messages_for_o1_mini(fake_llm: FakeLLMServer) -> None:
    with _sdk(fake_llm) as sdk, pytest.raises(openai.BadRequestError) as caught:
        sdk.chat.completions.create(model="o1-mini", messages=HI)  # type: ignore[arg-type]
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["param"] == "messages[0].role"


def test_the_strict_server_checks_reasoning_effort(fake_llm: FakeLLMServer) -> None:
    with _sdk(fake_llm) as sdk:
        with pytest.raises(openai.BadRequestError, match="'reasoning_effort'"):
            sdk.chat.completions.create(model="gpt-4o", messages=HI, reasoning_effort="low")  # type: ignore[arg-type]
        with pytest.raises(openai.BadRequestError, match="Supported values are"):
            sdk.chat.completions.create(model="o3", messages=HI, reasoning_effort="minimal")  # type: ignore[arg-type]


def _script_02(config_list: list[dict[str, Any]]) -> autogen.ChatResult:
    """An AutoGen 0.2 script as written in 2024, unchanged."""
    assistant = autogen.AssistantAgent(
        "assistant",
        llm_config={
            "config_list": config_list,
            "temperature": 0,
            "max_tokens": 300,
            "cache_seed": None,
        },
    )
    user = autogen.UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        max_consecutive_auto_reply=0,
        code_execution_config=False,
    )
    return user.initiate_chat(assistant, message="What is 2 + 2?", silent=True)


@pytest.mark.parametrize("model", ["o3", "o4-mini", "gpt-5", "gpt-5-mini"])
def test_an_autogen_02_script_runs_unchanged_on_reasoning_models(
    fake_llm: FakeLLMServer, model: str
) -> None:
    fake_llm.add_reply("4", usage={"prompt_tokens": 100, "completion_tokens": 40})
    result = _script_02(fake_llm.config_list(model=model))
    assert result.chat_history[-1]["content"] == "4"
    sent = fake_llm.last_request
    assert sent["max_completion_tokens"] == 300
    assert "max_tokens" not in sent
    assert "temperature" not in sent
    assert sent["messages"][0]["role"] == "developer"
    assert sent["messages"][0]["content"] == autogen.AssistantAgent.DEFAULT_SYSTEM_MESSAGE
    assert result.cost["usage_including_cached_inference"]["total_cost"] > 0


@pytest.mark.parametrize("model", ["o3", "o4-mini", "gpt-5", "gpt-5-mini"])
def test_the_same_02_script_runs_unchanged_through_the_responses_api(
    fake_llm: FakeLLMServer, model: str
) -> None:
    fake_llm.add_reply(
        "4",
        usage={
            "prompt_tokens": 100,
            "completion_tokens": 40,
            "completion_tokens_details": {"reasoning_tokens": 30},
        },
    )
    result = _script_02(fake_llm.config_list(model=model, api_type="responses"))
    assert result.chat_history[-1]["content"] == "4"
    sent = fake_llm.received[-1]
    assert sent.path == "/v1/responses"
    body = sent.json
    assert body["max_output_tokens"] == 300
    assert not {"max_tokens", "max_completion_tokens", "temperature"} & body.keys()
    assert body["instructions"] == autogen.AssistantAgent.DEFAULT_SYSTEM_MESSAGE
    assert body["input"] == [{"role": "user", "content": "What is 2 + 2?"}]
    assert body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    usage = result.cost["usage_including_cached_inference"]
    assert usage["total_cost"] > 0
    assert usage[model]["completion_tokens"] == 40  # reasoning tokens billed as output


def test_the_same_script_is_sent_as_written_to_gpt_4o(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("4")
    _script_02(fake_llm.config_list(model="gpt-4o"))
    sent = fake_llm.last_request
    assert (sent["max_tokens"], sent["temperature"]) == (300, 0)
    assert sent["messages"][0]["role"] == "system"


def test_without_adaptation_the_strict_server_fails_the_script(fake_llm: FakeLLMServer) -> None:
    # The adapter switched off by a profile that says the model takes everything: the script
    # fails on the strict server, as it would on OpenAI's API.
    permissive = {
        "temperature": True,
        "top_p": True,
        "token_limit": "max_tokens",
        "system_role": "system",
    }
    with pytest.raises(openai.BadRequestError, match="max_completion_tokens"):
        _script_02(fake_llm.config_list(model="o3", model_profile=permissive))
    assert fake_llm.requests[-1]["max_tokens"] == 300


def test_a_temperature_that_would_change_meaning_is_refused_before_sending(
    fake_llm: FakeLLMServer,
) -> None:
    client = OpenAIWrapper(config_list=fake_llm.config_list(model="gpt-5"), cache_seed=None)
    with pytest.raises(ConfigError, match=r"temperature=0\.7.*remove temperature"):
        client.create(messages=HI, temperature=0.7)
    with pytest.raises(ConfigError, match="use one of"):
        OpenAIWrapper(config_list=fake_llm.config_list(model="o3"), cache_seed=None).create(
            messages=HI, reasoning_effort="minimal"
        )
    assert fake_llm.requests == []


def test_o1_mini_gets_system_text_as_a_user_message(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    client = OpenAIWrapper(config_list=fake_llm.config_list(model="o1-mini"), cache_seed=None)
    client.create(messages=HI, max_tokens=20)
    sent = fake_llm.last_request
    assert [m["role"] for m in sent["messages"]] == ["user", "user"]
    assert sent["max_completion_tokens"] == 20


def test_the_callers_messages_and_config_are_not_changed(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    messages = [dict(m) for m in HI]
    config_list = fake_llm.config_list(model="o3", temperature=0, max_tokens=9)
    OpenAIWrapper(config_list=config_list, cache_seed=None).create(messages=messages)
    assert messages == HI
    assert config_list[0]["temperature"] == 0
    assert config_list[0]["max_tokens"] == 9


def test_one_warning_per_family_and_change(
    fake_llm: FakeLLMServer, adaptation_warnings: Callable[[], list[str]]
) -> None:
    client = OpenAIWrapper(config_list=fake_llm.config_list(model="gpt-5-nano"), cache_seed=None)
    for _ in range(3):
        fake_llm.add_reply("ok")
        client.create(messages=HI, temperature=0, max_tokens=5)
    texts = adaptation_warnings()
    assert len(texts) == 3  # max_tokens renamed, temperature=0 dropped, system -> developer
    assert all("'gpt-5-nano'" in t for t in texts)
    assert any("max_completion_tokens" in t for t in texts)
    assert any("temperature=0" in t for t in texts)


def test_a_model_profile_in_the_entry_overrides_the_table() -> None:
    with FakeLLMServer(strict=False) as server:
        server.add_reply("ok")
        server.add_reply("ok")
        # A deployment name the table does not know, declared to be an o3.
        OpenAIWrapper(
            config_list=server.config_list(model="my-reasoner", model_profile="o3"),
            cache_seed=None,
        ).create(messages=HI, max_tokens=7)
        assert server.last_request["max_completion_tokens"] == 7
        assert "model_profile" not in server.last_request
        # An endpoint whose o3 takes temperatures: the field overrides the family's.
        OpenAIWrapper(
            config_list=server.config_list(model="o3", model_profile={"temperature": True}),
            cache_seed=None,
        ).create(messages=HI, temperature=0.5)
        assert server.last_request["temperature"] == 0.5


@pytest.mark.parametrize(
    ("profile", "match"),
    [
        ({"temprature": False}, "unknown model profile field 'temprature'"),
        ("o9", "unknown family 'o9'"),
        ({"token_limit": "max_output"}, "'token_limit' must be one of"),
        (42, "model_profile must be a family name"),
    ],
)
def test_a_bad_model_profile_is_refused_when_the_config_is_built(
    fake_llm: FakeLLMServer, profile: object, match: str
) -> None:
    with pytest.raises(ConfigError, match=match):
        OpenAIWrapper(config_list=fake_llm.config_list(model="o3", model_profile=profile))


def test_an_unknown_model_is_sent_as_it_is(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    OpenAIWrapper(config_list=fake_llm.config_list(model="deepseek-chat"), cache_seed=None).create(
        messages=HI, temperature=0.3, max_tokens=5
    )
    assert fake_llm.last_request == {
        "model": "deepseek-chat",
        "messages": HI,
        "temperature": 0.3,
        "max_tokens": 5,
    }


@pytest.mark.parametrize(
    ("model", "input_1k", "cached_1k", "output_1k"),
    [
        ("gpt-4o", 0.0025, 0.00125, 0.01),
        ("o3", 0.002, 0.0005, 0.008),
        ("gpt-5", 0.00125, 0.000125, 0.01),
    ],
)
def test_cached_and_reasoning_tokens_are_priced_as_billed(
    fake_llm: FakeLLMServer, model: str, input_1k: float, cached_1k: float, output_1k: float
) -> None:
    usage = {
        "prompt_tokens": 10_000,
        "completion_tokens": 3_000,
        "cached_tokens": 8_000,
        "reasoning_tokens": 2_500,
    }
    fake_llm.add_reply("ok", usage=usage)
    client = OpenAIWrapper(config_list=fake_llm.config_list(model=model), cache_seed=None)
    response = client.create(messages=HI)
    assert response.usage.prompt_tokens_details.cached_tokens == 8_000
    assert response.usage.completion_tokens_details.reasoning_tokens == 2_500
    # Cached input at the cached rate; reasoning tokens are in completion_tokens, billed as output.
    expected = (2_000 * input_1k + 8_000 * cached_1k + 3_000 * output_1k) / 1000
    assert response.cost == pytest.approx(expected)
    summary = client.actual_usage_summary
    assert summary is not None
    assert summary["total_cost"] == pytest.approx(expected)


def test_the_cost_of_a_chat_counts_cached_tokens(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(
        "4",
        usage={
            "prompt_tokens": 1000,
            "completion_tokens": 100,
            "cached_tokens": 1000,
            "reasoning_tokens": 60,
        },
    )
    result = _script_02(fake_llm.config_list(model="o4-mini"))
    expected = (1000 * 0.000275 + 100 * 0.0044) / 1000
    assert result.cost["usage_excluding_cached_inference"]["total_cost"] == pytest.approx(expected)
