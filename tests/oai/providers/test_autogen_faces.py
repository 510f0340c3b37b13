"""AutoGen 0.2's module-level helpers of the provider modules (``autogen.oai.<provider>``),
named by parley's modules of the same path: costs by parley's price tables, Bedrock's message
and tool converters, Ollama's reading of tool calls from a reply's text. They import without
the providers' SDKs."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from parley.oai.anthropic import _calculate_cost
from parley.oai.bedrock import (
    PRICES_PER_K_TOKENS,
    BedrockClient,
    calculate_cost,
    convert_stop_reason_to_finish_reason,
    extract_system_messages,
    format_tools,
    oai_messages_to_bedrock_messages,
)
from parley.oai.cerebras import calculate_cerebras_cost
from parley.oai.cohere import calculate_cohere_cost
from parley.oai.gemini import calculate_gemini_cost
from parley.oai.groq import calculate_groq_cost
from parley.oai.mistral import calculate_mistral_cost
from parley.oai.ollama import response_to_tool_call
from parley.oai.together import calculate_together_cost

# -- costs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("calculate", "tokens_in", "tokens_out", "model", "expected"),
    [
        # AutoGen's own examples, where parley's table holds AutoGen's price.
        (_calculate_cost, 10, 25, "claude-3-opus-20240229", 0.002025),
        (calculate_groq_cost, 500, 300, "llama3-70b-8192", 0.000532),
        (calculate_together_cost, 10, 5, "mistralai/Mixtral-8x22B-Instruct-v0.1", 0.000018),
        (calculate_cerebras_cost, 500, 300, "llama3.1-70b", 800 * 0.6 / 1e6),
        (calculate_cohere_cost, 0, 0, "command-r", 0.0),
        (calculate_cost, 1000, 1000, "meta.llama3-8b-instruct-v1:0", 0.0009),
        (calculate_gemini_cost, 1_000_000, 1_000_000, "gemini-pro", 0.5 + 1.5),
        # Prices changed since AutoGen 0.2.35: parley's table has the current ones.
        (calculate_cohere_cost, 100, 200, "command-r-plus", 0.1 * 0.0025 + 0.2 * 0.01),
        (calculate_mistral_cost, 1000, 1000, "mistral-large-latest", 0.002 + 0.006),
    ],
)
def test_costs_by_the_price_table(
    calculate: Any, tokens_in: int, tokens_out: int, model: str, expected: float
) -> None:
    assert calculate(tokens_in, tokens_out, model) == pytest.approx(expected, rel=1e-9, abs=0)


@pytest.mark.parametrize(
    "calculate",
    [calculate_groq_cost, calculate_cohere_cost, calculate_mistral_cost, _calculate_cost],
)
def test_an_unknown_model_costs_nothing_with_a_warning(calculate: Any) -> None:
    with pytest.warns(UserWarning, match="Cost calculation not available for model no-such-model"):
        assert calculate(100, 100, "no-such-model") == 0.0


def test_the_cost_helpers_price_as_the_clients_do() -> None:
    """One table: a model's price changed on the client class changes the helper's answer."""
    assert PRICES_PER_K_TOKENS is BedrockClient.PRICES
    model = "parley.test-model-v1:0"
    PRICES_PER_K_TOKENS[model] = (0.001, 0.002)  # type: ignore[index]
    try:
        assert calculate_cost(1000, 500, model) == pytest.approx(0.002)
    finally:
        del PRICES_PER_K_TOKENS[model]  # type: ignore[attr-defined]


# -- Bedrock's converters ----------------------------------------------------------------------

SYSTEM = {"role": "system", "content": "You are a helpful AI bot."}
ASKED = {"role": "user", "name": "anne", "content": "Why is the sky blue?"}


def test_bedrock_messages_leave_system_prompts_to_the_system_field() -> None:
    assert oai_messages_to_bedrock_messages([SYSTEM, ASKED], False, True) == [
        {"role": "user", "content": [{"text": "Why is the sky blue?"}]}
    ]
    assert extract_system_messages([SYSTEM, ASKED]) == [{"text": "You are a helpful AI bot."}]


def test_bedrock_messages_without_system_prompts_speak_them_as_the_user() -> None:
    # AutoGen put an invented "Please continue." assistant turn between the two user turns;
    # parley joins a side's consecutive messages into one turn (README, Differences).
    assert oai_messages_to_bedrock_messages([SYSTEM, ASKED], False, False) == [
        {
            "role": "user",
            "content": [{"text": "You are a helpful AI bot."}, {"text": "Why is the sky blue?"}],
        }
    ]


def test_bedrock_messages_end_with_the_user() -> None:
    said = {"role": "assistant", "content": "The sky is blue because that's a great colour."}
    messages = oai_messages_to_bedrock_messages([SYSTEM, ASKED, said], False, True)
    assert messages == [
        {"role": "user", "content": [{"text": "Why is the sky blue?"}]},
        {"role": "assistant", "content": [{"text": said["content"]}]},
        {"role": "user", "content": [{"text": "Please continue."}]},
    ]


def test_bedrock_tool_calls_are_blocks_with_tools_and_text_without() -> None:
    call = {"id": "t1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}
    talk = [
        ASKED,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "t1", "content": "2"},
    ]
    with_tools = oai_messages_to_bedrock_messages(talk, True, True)
    assert with_tools[1]["content"] == [
        {"toolUse": {"toolUseId": "t1", "name": "add", "input": {"a": 1}}}
    ]
    assert with_tools[2]["content"][0]["toolResult"]["toolUseId"] == "t1"
    without = oai_messages_to_bedrock_messages(talk, False, True)
    assert all("text" in block for turn in without for block in turn["content"])


def test_bedrock_tools_and_stop_reasons() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    tool = {
        "type": "function",
        "function": {"name": "add", "description": "Add.", "parameters": schema},
    }
    assert format_tools([tool]) == {
        "tools": [
            {"toolSpec": {"name": "add", "description": "Add.", "inputSchema": {"json": schema}}}
        ]
    }
    reasons = ["tool_use", "end_turn", "max_tokens", "stop_sequence", "content_filtered"]
    assert [convert_stop_reason_to_finish_reason(r) for r in reasons] == [
        "tool_calls",
        "stop",
        "length",
        "stop",
        "content_filter",
    ]


# -- Ollama: tool calls read from a reply's text ---------------------------------------------

CALLS = [
    {"name": "weather_forecast", "arguments": {"location": "New York"}},
    {"name": "currency_calculator", "arguments": {"base_amount": 123.45, "quote_currency": "EUR"}},
]
CALLS_TEXT = (
    '[{"name": "weather_forecast", "arguments": {"location": "New York"}}, '
    '{"name": "currency_calculator", "arguments": {"base_amount": 123.45, "quote_currency": "EUR"}}]'
)


@pytest.mark.parametrize(
    "text",
    [
        CALLS_TEXT,
        f"I will call two functions, weather_forecast and currency_calculator:\n{CALLS_TEXT}",
    ],
)
def test_response_to_tool_call_finds_the_calls(text: str) -> None:
    assert response_to_tool_call(text) == CALLS


def test_response_to_tool_call_reads_one_object_as_one_call() -> None:
    assert response_to_tool_call('{"name": "f", "arguments": {"x": 1}}') == [
        {"name": "f", "arguments": {"x": 1}}
    ]


@pytest.mark.parametrize(
    "text",
    [
        '[{"function": "weather_forecast", "args": {"location": "New York"}}]',
        "Call the weather_forecast function and pass in 'New York' as the 'location' argument.",
    ],
)
def test_response_to_tool_call_is_none_without_a_call(text: str) -> None:
    assert response_to_tool_call(text) is None


# -- importable without the SDKs ---------------------------------------------------------------


def test_the_helpers_import_without_any_provider_sdk() -> None:
    blocked = ["anthropic", "boto3", "botocore", "cohere", "groq", "mistralai", "ollama"]
    blocked += ["together", "cerebras", "google", "vertexai"]
    code = (
        "import sys\n"
        f"for name in {blocked!r}:\n"
        "    sys.modules[name] = None\n"
        "from parley.oai.bedrock import oai_messages_to_bedrock_messages, calculate_cost\n"
        "from parley.oai.ollama import response_to_tool_call\n"
        "from parley.oai.anthropic import _calculate_cost\n"
        "from parley.oai.groq import calculate_groq_cost\n"
        "from parley.oai.gemini import calculate_gemini_cost\n"
        "from parley.oai.client_utils import validate_parameter, should_hide_tools\n"
        'print(response_to_tool_call(\'{"name": "f"}\'))\n'
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[{'name': 'f', 'arguments': {}}]"


# -- Anthropic's converter ---------------------------------------------------------------------


def test_anthropic_messages_leave_out_the_system_and_end_with_the_user() -> None:
    from parley.oai.anthropic import oai_messages_to_anthropic_messages

    said = {"role": "assistant", "content": "Because of scattering."}
    params = {"messages": [SYSTEM, ASKED, said]}
    assert oai_messages_to_anthropic_messages(params) == [
        {"role": "user", "content": [{"type": "text", "text": "Why is the sky blue?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Because of scattering."}]},
        {"role": "user", "content": [{"type": "text", "text": "Please continue."}]},
    ]
    assert params == {"messages": [SYSTEM, ASKED, said]}  # the caller's params unchanged
