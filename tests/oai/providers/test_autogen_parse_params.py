"""AutoGen 0.2's ``parse_params`` of the provider clients (and Bedrock's
``parse_custom_params``): the model and the request parameters a client sends, each checked as
AutoGen's client checked it — a value of the wrong type or out of bounds is replaced by the
default with a ``UserWarning``, a request without a model is an ``AssertionError``. The faces
report what parley really sends: the wire tests at the end check that."""

from __future__ import annotations

from typing import Any

import pytest

from parley.exceptions import ConfigAssertionError, ConfigError
from parley.oai.bedrock import BedrockClient
from parley.oai.cerebras import CerebrasClient
from parley.oai.cohere import CohereClient
from parley.oai.groq import GroqClient
from parley.oai.mistral import MistralAIClient
from parley.oai.ollama import OllamaClient
from parley.oai.together import TogetherClient
from parley.testing import FakeLLMServer

from . import scenarios

# -- Groq ----------------------------------------------------------------------------------------

GROQ_DEFAULTS = {
    "model": "llama3-70b-8192",
    "frequency_penalty": None,
    "presence_penalty": None,
    "max_tokens": None,
    "seed": None,
    "stream": False,
    "temperature": 1,
    "top_p": None,
}


def test_groq_keeps_valid_values() -> None:
    given = {"model": "llama3-70b-8192", "frequency_penalty": -1.0, "presence_penalty": 2}
    given |= {"max_tokens": 64, "seed": 3, "stream": True, "temperature": 0, "top_p": 0.5}
    assert GroqClient(api_key="k").parse_params(given) == given


def test_groq_fills_in_autogens_defaults() -> None:
    assert GroqClient(api_key="k").parse_params({"model": "llama3-70b-8192"}) == GROQ_DEFAULTS


@pytest.mark.parametrize(
    ("name", "value", "rule"),
    [
        ("temperature", "0.2", "must be of type"),
        ("temperature", 2.5, "has numerical bounds, >= 0 and <= 2"),
        ("frequency_penalty", -3, "has numerical bounds, >= -2 and <= 2"),
        ("max_tokens", -1, "has numerical bounds, >= 0"),
        ("stream", "yes", "must be of type bool"),
        ("seed", 1.5, "must be of type int"),
    ],
)
def test_groq_replaces_a_bad_value_by_the_default(name: str, value: Any, rule: str) -> None:
    with pytest.warns(UserWarning, match=f"Config error - {name} {rule}"):
        parsed = GroqClient(api_key="k").parse_params({"model": "llama3-70b-8192", name: value})
    assert parsed == GROQ_DEFAULTS


def test_groq_reports_parleys_extra_parameters_only_when_given() -> None:
    parsed = GroqClient(api_key="k").parse_params({"model": "m", "stop": ["END"]})
    assert parsed["stop"] == ["END"]
    assert "tool_choice" not in parsed


# -- Together ------------------------------------------------------------------------------------


def test_together_defaults_and_bad_values() -> None:
    client = TogetherClient(api_key="k")
    defaults = dict.fromkeys(
        ("temperature", "top_p", "top_k", "repetition_penalty", "presence_penalty")
    ) | dict.fromkeys(("frequency_penalty", "min_p", "safety_model"))
    expected = {"model": "m", "max_tokens": 512, "stream": False, **defaults}
    assert client.parse_params({"model": "m"}) == expected
    bad = {"model": "m", "max_tokens": "100", "repetition_penalty": 1, "min_p": 1.5}
    bad |= {"safety_model": 7, "stream": None}
    with pytest.warns(UserWarning, match="^Config error - ") as caught:
        assert client.parse_params(bad) == expected
    said = " ".join(str(w.message) for w in caught)
    # stream may not be None for Together; repetition_penalty must be a float, not an int.
    assert "stream cannot be None" in said
    assert "repetition_penalty must be of type float" in said
    assert "min_p has numerical bounds, >= 0 and <= 1" in said


def test_together_keeps_stream_with_tools() -> None:
    # AutoGen switched streaming off for requests with tools; parley streams them (README).
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    parsed = TogetherClient(api_key="k").parse_params(
        {"model": "m", "stream": True, "tools": tools}
    )
    assert parsed["stream"] is True


# -- Cerebras ------------------------------------------------------------------------------------


def test_cerebras_temperature_is_bounded_by_one_and_a_half() -> None:
    client = CerebrasClient(api_key="k")
    assert client.parse_params({"model": "llama3.1-8b", "temperature": 1.5})["temperature"] == 1.5
    with pytest.warns(UserWarning, match=r"temperature has numerical bounds, >= 0 and <= 1.5"):
        parsed = client.parse_params({"model": "llama3.1-8b", "temperature": 1.6})
    assert parsed == {
        "model": "llama3.1-8b",
        "max_tokens": None,
        "seed": None,
        "stream": False,
        "temperature": 1,
        "top_p": None,
    }


# -- Mistral -------------------------------------------------------------------------------------


def test_mistral_reports_parameters_messages_and_tools() -> None:
    tool = {"type": "function", "function": {"name": "f", "description": "F.", "parameters": {}}}
    params = {
        "model": "mistral-small-latest",
        "messages": [{"role": "user", "name": "ann", "content": "Hi"}],
        "tools": [tool],
    }
    assert MistralAIClient(api_key="k").parse_params(params) == {
        "model": "mistral-small-latest",
        "temperature": 0.7,
        "top_p": None,
        "max_tokens": None,
        "safe_prompt": False,
        "random_seed": None,
        "messages": [{"role": "user", "content": "Hi"}],
        "tools": [tool],
    }


def test_mistral_safe_prompt_must_be_a_bool() -> None:
    with pytest.warns(UserWarning, match="safe_prompt must be of type bool"):
        parsed = MistralAIClient(api_key="k").parse_params({"model": "m", "safe_prompt": "yes"})
    assert parsed["safe_prompt"] is False
    assert parsed["messages"] == [{"role": "user", "content": "Please continue."}]


# -- Cohere --------------------------------------------------------------------------------------


def test_cohere_fills_in_autogens_defaults() -> None:
    parsed = CohereClient(api_key="k").parse_params({"model": "command-r", "max_tokens": 20})
    assert parsed == {
        "model": "command-r",
        "temperature": 0.3,
        "max_tokens": 20,
        "k": 0,
        "p": 0.75,
        "seed": None,
        "frequency_penalty": 0,
        "presence_penalty": 0,
    }


def test_cohere_bounds_and_openai_names() -> None:
    client = CohereClient(api_key="k")
    # top_p / top_k stand for Cohere's p / k.
    parsed = client.parse_params({"model": "command-r", "top_p": 0.5, "top_k": 7})
    assert (parsed["p"], parsed["k"]) == (0.5, 7)
    with pytest.warns(UserWarning, match=r"p has numerical bounds, >= 0.01 and <= 0.99"):
        assert client.parse_params({"model": "command-r", "p": 1.0})["p"] == 0.75
    with pytest.warns(UserWarning, match="temperature cannot be None"):
        assert (
            client.parse_params({"model": "command-r", "temperature": None})["temperature"] == 0.3
        )


# -- Ollama --------------------------------------------------------------------------------------


def test_ollama_options_only_as_given() -> None:
    client = OllamaClient()
    assert client.parse_params({"model": "llama3.1:8b"}) == {
        "model": "llama3.1:8b",
        "stream": False,
    }
    given = {"model": "llama3.1:8b", "temperature": 0.2, "num_predict": 50, "top_k": 5}
    assert client.parse_params(given) == {
        "model": "llama3.1:8b",
        "stream": False,
        "options": {"temperature": 0.2, "num_predict": 50, "top_k": 5},
    }


def test_ollama_bad_options_take_autogens_stand_ins() -> None:
    bad = {"model": "m", "temperature": "hot", "num_predict": 1.5, "repeat_penalty": "x"}
    bad |= {"seed": "7", "top_k": 0.5, "top_p": "1", "stream": "True"}
    with pytest.warns(UserWarning, match="^Config error - "):
        parsed = OllamaClient().parse_params(bad)
    assert parsed == {
        "model": "m",
        "stream": False,
        "options": {
            "temperature": 0.8,
            "num_predict": 128,
            "repeat_penalty": 1.1,
            "seed": 42,
            "top_k": 40,
            "top_p": 0.9,
        },
    }


def test_ollama_sends_tools_natively_unless_hidden() -> None:
    tool = {"type": "function", "function": {"name": "f", "description": "", "parameters": {}}}
    params = {"model": "m", "tools": [tool], "messages": [{"role": "user", "content": "go"}]}
    assert OllamaClient().parse_params(params)["tools"][0]["function"]["name"] == "f"
    emulated = OllamaClient().parse_params({**params, "native_tool_calls": False})
    assert "tools" not in emulated


# -- Bedrock -------------------------------------------------------------------------------------


def test_bedrock_splits_inference_config_from_model_fields() -> None:
    client = BedrockClient(aws_region="us-east-1")
    params = {"model": "meta.llama3-8b-instruct-v1:0", "temperature": 0.1, "maxTokens": 99}
    params |= {"topP": 0.7, "top_k": 20, "seed": 5, "stream": False}
    assert client.parse_params(params) == (
        {"temperature": 0.1, "maxTokens": 99, "topP": 0.7},
        {"top_k": 20, "seed": 5},
    )
    assert client.parse_params({"model": "meta.llama3-8b-instruct-v1:0"}) == ({}, {})


def test_bedrock_keeps_a_bad_value_as_none() -> None:
    client = BedrockClient(aws_region="us-east-1")
    with pytest.warns(UserWarning, match="^Config error - ") as caught:
        base, extra = client.parse_params({"model": "m", "maxTokens": 2.5, "k": "3"})
    assert (base, extra) == ({"maxTokens": None}, {"k": None})
    assert [str(w.message) for w in caught] == [
        "Config error - maxTokens must be of type int, defaulting to None.",
        "Config error - k must be of type int, defaulting to None.",
    ]


def test_bedrock_reads_openai_names_as_converse_sends_them() -> None:
    # AutoGen passed top_p as a model field; parley sends it as Converse's topP.
    base, extra = BedrockClient().parse_params(
        {"model": "m", "max_tokens": 10, "top_p": 0.3, "stop": "END"}
    )
    assert base == {"maxTokens": 10, "topP": 0.3, "stopSequences": ["END"]}
    assert extra == {}


def test_bedrock_custom_params_note_system_prompt_support() -> None:
    client = BedrockClient()
    client.parse_custom_params({})
    assert client._supports_system_prompts is True
    client.parse_custom_params({"supports_system_prompts": False})
    assert client._supports_system_prompts is False


# -- no model ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("client", "words"),
    [
        (GroqClient(api_key="k"), "nominate the Groq model"),
        (TogetherClient(api_key="k"), "nominate the Together.AI model"),
        (CerebrasClient(api_key="k"), "nominate the Cerebras model"),
        (MistralAIClient(api_key="k"), "nominate the Mistral.ai model"),
        (CohereClient(api_key="k"), "nominate the Cohere model"),
        (OllamaClient(), "nominate the Ollama model"),
        (BedrockClient(), "Please provide the 'model` in the config_list to use Amazon Bedrock"),
    ],
)
def test_a_request_without_a_model_is_an_assertion_error(client: Any, words: str) -> None:
    with pytest.raises(AssertionError, match=words) as raised:
        client.parse_params({"temperature": 0.5})
    assert isinstance(raised.value, ConfigAssertionError)
    assert isinstance(raised.value, ConfigError)


# -- what is sent --------------------------------------------------------------------------------


def test_groq_sends_the_checked_values(fake_llm: FakeLLMServer) -> None:
    entry = scenarios.entry(fake_llm, "groq", "llama3-8b-8192", presence_penalty=5, max_tokens=30)
    with pytest.warns(UserWarning, match="presence_penalty has numerical bounds"):
        scenarios.two_agent_chat(fake_llm, entry)
    sent = fake_llm.requests[0]
    assert (sent["temperature"], sent["max_tokens"], sent["stream"]) == (1, 30, False)
    assert "presence_penalty" not in sent  # its default, None: not sent


def test_together_sends_its_default_max_tokens(fake_llm: FakeLLMServer) -> None:
    entry = scenarios.entry(fake_llm, "together", "m", min_p=3)
    with pytest.warns(UserWarning, match="min_p has numerical bounds"):
        scenarios.two_agent_chat(fake_llm, entry)
    sent = fake_llm.requests[0]
    assert sent["max_tokens"] == 512
    assert "min_p" not in sent
