"""``api_type: "responses"`` fitted to the model: the profile's rules on the Responses path,
chat-only parameters dropped or refused, ``store``/``include`` for reasoning items, streamed
tool calls and Azure OpenAI's Responses paths. Through the real openai SDK against the strict
FakeLLMServer on loopback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import openai
import pytest

import parley
from parley import AssistantAgent, UserProxyAgent
from parley.exceptions import ConfigError
from parley.io import IOScripted, IOStream
from parley.oai import ChatCompletion, OpenAIWrapper
from parley.testing import FakeLLMServer

HI = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
THINKING = {"completion_tokens_details": {"reasoning_tokens": 12}}


def _wrapper(server: FakeLLMServer, model: str, **extra: Any) -> OpenAIWrapper:
    config_list = server.config_list(model=model, api_type="responses", **extra)
    return OpenAIWrapper(config_list=config_list, cache_seed=None)


def _sdk(server: FakeLLMServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=server.api_key or "sk-parley-fake")


# -- the profile on the Responses path -------------------------------------------------------


@pytest.mark.parametrize("model", ["o3", "o4-mini", "gpt-5", "gpt-5-mini"])
def test_a_reasoning_model_gets_a_fitted_responses_request(
    fake_llm: FakeLLMServer, model: str
) -> None:
    fake_llm.add_reply("ok")
    client = _wrapper(fake_llm, model)
    response = client.create(
        messages=HI, temperature=0, top_p=1, max_tokens=40, parallel_tool_calls=False
    )
    assert response.choices[0].message.content == "ok"
    body = fake_llm.received[-1].json
    assert body["max_output_tokens"] == 40
    for gone in ("temperature", "top_p", "max_tokens", "max_completion_tokens"):
        assert gone not in body
    assert body["instructions"] == "Be brief."
    assert body["input"] == [{"role": "user", "content": "hi"}]
    if model.startswith("o"):
        assert "parallel_tool_calls" not in body  # the o-series refuses it
    else:
        assert body["parallel_tool_calls"] is False


def test_a_chat_model_keeps_its_sampling_on_the_responses_path(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    _wrapper(fake_llm, "gpt-4o").create(messages=HI, temperature=0.2, top_p=0.5, max_tokens=9)
    body = fake_llm.received[-1].json
    assert (body["temperature"], body["top_p"], body["max_output_tokens"]) == (0.2, 0.5, 9)


@pytest.mark.parametrize(
    ("model", "params", "match"),
    [
        ("o3", {"temperature": 0.7}, "temperature=0.7"),
        ("o3", {"reasoning_effort": "minimal"}, r"use one of \['low', 'medium', 'high'\]"),
        ("gpt-4o", {"reasoning_effort": "low"}, "remove reasoning_effort"),
    ],
)
def test_what_would_change_meaning_is_refused_before_sending(
    fake_llm: FakeLLMServer, model: str, params: dict[str, Any], match: str
) -> None:
    with pytest.raises(ConfigError, match=match):
        _wrapper(fake_llm, model).create(messages=HI, **params)
    assert fake_llm.received == []


def test_reasoning_effort_travels_as_reasoning_effort_field(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    _wrapper(fake_llm, "gpt-5").create(messages=HI, reasoning_effort="minimal")
    assert fake_llm.received[-1].json["reasoning"] == {"effort": "minimal"}


def test_the_strict_server_refuses_what_the_responses_api_refuses(
    fake_llm: FakeLLMServer,
) -> None:
    with _sdk(fake_llm) as sdk:
        with pytest.raises(openai.BadRequestError) as caught:
            sdk.responses.create(model="gpt-5", input="hi", temperature=0)
        assert isinstance(caught.value.body, dict)
        assert caught.value.body["param"] == "temperature"
        assert "'temperature' is not supported with this model" in caught.value.body["message"]
        with pytest.raises(openai.BadRequestError, match=r"'reasoning\.effort'"):
            sdk.responses.create(model="gpt-4o", input="hi", reasoning={"effort": "low"})
        with pytest.raises(openai.BadRequestError, match="Encrypted content is not supported"):
            sdk.responses.create(
                model="gpt-4o", input="hi", include=["reasoning.encrypted_content"]
            )


def test_without_adaptation_the_strict_server_refuses(fake_llm: FakeLLMServer) -> None:
    # A profile saying o3 takes temperatures switches the adapter off for it: the strict
    # server answers as OpenAI's Responses API would.
    client = _wrapper(fake_llm, "o3", model_profile={"temperature": True})
    with pytest.raises(openai.BadRequestError, match="'temperature' is not supported"):
        client.create(messages=HI, temperature=0)


# -- chat-only parameters --------------------------------------------------------------------


def test_sampling_nudges_are_dropped_with_one_warning(
    fake_llm: FakeLLMServer, adaptation_warnings: Callable[[], list[str]]
) -> None:
    client = _wrapper(fake_llm, "gpt-4o-mini")
    for _ in range(2):
        fake_llm.add_reply("ok")
        client.create(messages=HI, seed=7, frequency_penalty=0.5, presence_penalty=0, n=1)
    body = fake_llm.received[-1].json
    for gone in ("seed", "frequency_penalty", "presence_penalty", "n"):
        assert gone not in body
    texts = sorted(adaptation_warnings())
    # presence_penalty=0 and n=1 are the defaults: dropped without a word.
    assert len(texts) == 2
    assert "frequency_penalty is not sent" in texts[0]
    assert "seed is not sent" in texts[1]
    assert all(t.startswith("api_type 'responses'") for t in texts)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"stop": ["\n"]}, "takes no stop sequences.*remove stop"),
        ({"n": 2}, "one reply per request.*remove n"),
        ({"logit_bias": {"50256": -100}}, "takes no logit_bias"),
        ({"max_tokens": 5, "max_output_tokens": 9}, "max_tokens=5, max_output_tokens=9"),
    ],
)
def test_chat_only_parameters_that_change_the_reply_are_refused(
    fake_llm: FakeLLMServer, params: dict[str, Any], match: str
) -> None:
    with pytest.raises(ConfigError, match=match) as caught:
        _wrapper(fake_llm, "gpt-4o-mini").create(messages=HI, **params)
    assert "api_type 'responses'" in str(caught.value)
    assert fake_llm.received == []


def test_chat_only_defaults_pass_silently(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    _wrapper(fake_llm, "gpt-4o-mini").create(messages=HI, stop=None, logit_bias={}, n=1)
    body = fake_llm.received[-1].json
    assert not {"stop", "logit_bias", "n"} & body.keys()


def test_the_callers_params_are_not_changed(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok")
    config_list = fake_llm.config_list(
        model="o3", api_type="responses", temperature=0, max_tokens=9, seed=1
    )
    messages = [dict(m) for m in HI]
    OpenAIWrapper(config_list=config_list, cache_seed=None).create(messages=messages)
    assert messages == HI
    assert (config_list[0]["temperature"], config_list[0]["seed"]) == (0, 1)


# -- store and include -----------------------------------------------------------------------


def test_nothing_is_stored_unless_the_config_says_so(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("ok").add_reply("ok")
    _wrapper(fake_llm, "gpt-4o-mini").create(messages=HI)
    first = fake_llm.received[-1].json
    assert first["store"] is False
    assert "include" not in first  # a model that does not reason has nothing to include
    _wrapper(fake_llm, "gpt-4o-mini", store=True).create(messages=HI)
    assert fake_llm.received[-1].json["store"] is True


def _two_turns(server: FakeLLMServer, **extra: Any) -> list[dict[str, Any]]:
    server.add_reply("thought it through", usage=THINKING).add_reply("TERMINATE")
    llm_config = {
        "config_list": server.config_list(model="o4-mini", api_type="responses", **extra),
        "cache_seed": None,
    }
    assistant = AssistantAgent("assistant", llm_config=llm_config)
    user = UserProxyAgent(
        "user", human_input_mode="NEVER", code_execution_config=False, default_auto_reply="more"
    )
    user.initiate_chat(assistant, message="think", max_turns=2, silent=True)
    return [r.json for r in server.received]


def test_reasoning_items_go_back_encrypted_when_nothing_is_stored(
    fake_llm: FakeLLMServer,
) -> None:
    first, second = _two_turns(fake_llm)
    assert (first["store"], first["include"]) == (False, ["reasoning.encrypted_content"])
    reasoning = [i for i in second["input"] if i.get("type") == "reasoning"]
    assert len(reasoning) == 1
    assert reasoning[0]["encrypted_content"].startswith("fake-reasoning-of-")


def test_stored_reasoning_items_go_back_by_id(fake_llm: FakeLLMServer) -> None:
    first, second = _two_turns(fake_llm, store=True)
    assert first["store"] is True
    assert "include" not in first
    reasoning = [i for i in second["input"] if i.get("type") == "reasoning"]
    assert reasoning[0]["id"].startswith("rs_")
    assert "encrypted_content" not in reasoning[0]


def test_an_unstored_reasoning_item_without_its_content_is_not_found(
    fake_llm: FakeLLMServer,
) -> None:
    item = {"type": "reasoning", "id": "rs_gone", "summary": []}
    with _sdk(fake_llm) as sdk, pytest.raises(openai.NotFoundError, match="rs_gone"):
        sdk.responses.create(
            model="o3",
            store=False,
            input=[{"role": "user", "content": "hi"}, item],  # type: ignore[list-item]
        )


# -- streaming -------------------------------------------------------------------------------


def test_a_streamed_tool_call_is_reassembled_and_its_text_echoed(
    fake_llm: FakeLLMServer,
) -> None:
    llm_config = {
        "config_list": fake_llm.config_list(model="gpt-5-mini", api_type="responses"),
        "cache_seed": None,
        "stream": True,
    }
    assistant = AssistantAgent("assistant", llm_config=llm_config)
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)

    def add(a: Annotated[int, "first"], b: Annotated[int, "second"]) -> int:
        return a + b

    parley.register_function(add, caller=assistant, executor=user, description="Add.")
    arguments = {"a": 1234567, "b": 7654321}
    fake_llm.add_reply(
        "Adding the two numbers now.",
        tool_calls=[{"name": "add", "arguments": arguments, "id": "call_add"}],
    )
    fake_llm.add_reply("8888888")
    screen = IOScripted()
    with IOStream.set_default(screen):
        result = user.initiate_chat(assistant, message="1234567 + 7654321?", max_turns=2)
    assert "Adding the two numbers now." in screen.text
    history = result.chat_history or []
    calls = history[1]["tool_calls"]
    assert calls is not None
    assert calls[0]["function"]["name"] == "add"
    assert calls[0]["function"]["arguments"] == '{"a": 1234567, "b": 7654321}'
    assert history[2]["content"] == "8888888"
    assert history[-1]["content"] == "8888888"
    second = fake_llm.received[1].json
    assert second["stream"] is True
    assert {"type": "function_call_output", "call_id": "call_add", "output": "8888888"} in (
        second["input"]
    )


def test_the_stream_sends_function_call_arguments_in_pieces(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply(tool_calls=[{"name": "add", "arguments": {"a": 1, "b": 22222}}])
    with _sdk(fake_llm) as sdk:
        events = list(sdk.responses.create(model="gpt-5", input="add", stream=True))
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert len(deltas) > 1
    done = next(e for e in events if e.type == "response.function_call_arguments.done")
    assert "".join(deltas) == done.arguments == '{"a": 1, "b": 22222}'


# -- Azure OpenAI ----------------------------------------------------------------------------


def test_azure_openai_v1_responses_through_api_type_responses() -> None:
    with FakeLLMServer(api_key="azure-key") as server:
        server.add_reply("from azure", usage=THINKING)
        entry = {
            "model": "my-gpt-5-deployment",
            "api_type": "responses",
            "base_url": f"{server.url}/openai/v1/",
            "api_key": "azure-key",
            "model_profile": "gpt-5",  # a deployment name: its model family said
        }
        response = OpenAIWrapper(config_list=[entry], cache_seed=None).create(
            messages=HI, temperature=0, max_tokens=30
        )
        assert response.choices[0].message.content == "from azure"
        sent = server.received[0]
        assert sent.path == "/openai/v1/responses"
        assert sent.json["model"] == "my-gpt-5-deployment"
        assert sent.json["max_output_tokens"] == 30
        assert "temperature" not in sent.json
        assert sent.json["include"] == ["reasoning.encrypted_content"]


def test_azure_dated_responses_path_answers_the_azure_client() -> None:
    with FakeLLMServer(api_key="azure-key") as server:
        server.add_reply("dated")
        with openai.AzureOpenAI(
            azure_endpoint=server.url,
            api_key="azure-key",
            api_version="2025-04-01-preview",
            max_retries=0,
        ) as azure:
            response = azure.responses.create(model="my-deployment", input="hi")
        assert response.output_text == "dated"
        sent = server.received[0]
        assert sent.path == "/openai/responses"
        assert sent.headers["api-key"] == "azure-key"


# -- the legacy Completion -------------------------------------------------------------------


def test_the_legacy_chat_completion_is_fitted_too(
    fake_llm: FakeLLMServer, legacy_completion: Any
) -> None:
    fake_llm.add_reply("4")
    response = ChatCompletion.create(
        messages=HI,
        model="o3",
        base_url=fake_llm.base_url,
        api_key="sk-test",
        max_tokens=20,
        temperature=0,
        cache_seed=None,
    )
    assert ChatCompletion.extract_text(response) == ["4"]
    sent = fake_llm.last_request
    assert sent["max_completion_tokens"] == 20
    assert "temperature" not in sent
    assert sent["messages"][0]["role"] == "developer"
