"""AutoGen 0.2's ``oai_messages_to_<provider>_messages`` conversions: Ollama's method (the
messages parley's client really sends), Groq's, Cerebras' and Together's module functions
(AutoGen's results; parley's requests keep OpenAI's messages) and Cohere's, in the chat v1
shape AutoGen's client built."""

from __future__ import annotations

from typing import Any

import pytest

from parley.oai.cerebras import oai_messages_to_cerebras_messages
from parley.oai.cohere import oai_messages_to_cohere_messages
from parley.oai.groq import oai_messages_to_groq_messages
from parley.oai.ollama import OllamaClient
from parley.oai.together import oai_messages_to_together_messages
from parley.testing import FakeLLMServer

from . import scenarios

SYSTEM = {"role": "system", "content": "Be brief."}
ASK = {"role": "user", "name": "sam", "content": "What is rain?"}
SAID = {"role": "assistant", "content": "Water falling from clouds."}
CALL = {"id": "c9", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}
CALLED = {"role": "assistant", "content": "Let me check.", "tool_calls": [CALL]}
RESULT = {"role": "tool", "tool_call_id": "c9", "content": "found"}

# -- Ollama --------------------------------------------------------------------------------------


def test_ollama_drops_names() -> None:
    assert OllamaClient().oai_messages_to_ollama_messages([SYSTEM, ASK], None) == [
        SYSTEM,
        {"role": "user", "content": "What is rain?"},
    ]


def test_ollama_sends_a_final_system_message_as_the_users() -> None:
    summary = {"role": "system", "content": "Summarize the talk."}
    assert OllamaClient().oai_messages_to_ollama_messages([SYSTEM, ASK, summary], None) == [
        SYSTEM,
        {"role": "user", "content": "What is rain?"},
        {"role": "user", "content": "Summarize the talk."},
    ]


def test_ollama_asks_to_continue_after_the_assistant() -> None:
    assert OllamaClient().oai_messages_to_ollama_messages([SYSTEM, ASK, SAID], None)[-2:] == [
        SAID,
        {"role": "user", "content": "Please continue."},
    ]


def test_ollama_leaves_a_lone_system_message_alone() -> None:
    assert OllamaClient().oai_messages_to_ollama_messages([SYSTEM], None) == [SYSTEM]


def test_ollama_method_follows_the_configs_tool_calling() -> None:
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    talk = [SYSTEM, ASK, CALLED, RESULT]
    native = OllamaClient().oai_messages_to_ollama_messages(talk, tools)
    assert native[-1] == {"role": "tool", "content": "found", "tool_name": "lookup"}
    emulated = OllamaClient(native_tool_calls=False).oai_messages_to_ollama_messages(talk, tools)
    assert all(m["role"] != "tool" for m in emulated)
    assert "lookup" in emulated[0]["content"]  # the tools are described to the model


def test_ollama_requests_carry_the_summary_prompt_last(fake_llm: FakeLLMServer) -> None:
    from parley import ConversableAgent

    fake_llm.add_reply("Rain is water.")
    fake_llm.add_reply("They talked about rain.")
    config = scenarios.entry(fake_llm, "ollama", "llama3.1:8b")
    llm = {"config_list": [config], "cache_seed": None}
    bot = ConversableAgent("bot", llm_config=llm, system_message="Be brief.")
    user = ConversableAgent("user", llm_config=llm, human_input_mode="NEVER")
    result = user.initiate_chat(
        bot,
        message="What is rain?",
        max_turns=1,
        silent=True,
        summary_method="reflection_with_llm",
        summary_args={"summary_prompt": "Summarize the talk."},
    )
    assert result.summary == "They talked about rain."
    last = fake_llm.requests[-1]["messages"]
    assert last[-1] == {"role": "user", "content": "Summarize the talk."}


# -- Groq, Cerebras, Together --------------------------------------------------------------------


@pytest.mark.parametrize(
    "convert", [oai_messages_to_groq_messages, oai_messages_to_cerebras_messages]
)
def test_groq_and_cerebras_drop_names(convert: Any) -> None:
    given = [SYSTEM, ASK, SAID]
    assert convert(given) == [SYSTEM, {"role": "user", "content": "What is rain?"}, SAID]
    assert given[1]["name"] == "sam"  # the caller's messages are left alone


def test_together_speaks_tool_results_as_the_user() -> None:
    given = [ASK, CALLED, RESULT]
    out = oai_messages_to_together_messages(given)
    assert out == [ASK, CALLED, {"role": "user", "tool_call_id": "c9", "content": "found"}]
    assert RESULT["role"] == "tool"
    out[1]["tool_calls"][0]["id"] = "changed"
    assert CALL["id"] == "c9"  # deep copies


# -- Cohere (chat v1 shape) ----------------------------------------------------------------------


def test_cohere_v1_moves_the_last_user_message_out() -> None:
    second = {"role": "system", "content": "Use metric units."}
    history, preamble, message = oai_messages_to_cohere_messages([SYSTEM, second, ASK], {}, {})
    assert (history, preamble, message) == ([], "Be brief.\nUse metric units.", "What is rain?")


def test_cohere_v1_asks_to_continue_after_the_chatbot() -> None:
    history, _, message = oai_messages_to_cohere_messages([ASK, SAID], {}, {})
    assert history == [
        {"role": "USER", "message": "What is rain?"},
        {"role": "CHATBOT", "message": "Water falling from clouds."},
    ]
    assert message == "Please continue."


def test_cohere_v1_tools_and_results_go_into_the_request_params() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q": {"type": "string", "description": "What to look up"},
            "unit": {"type": "string", "description": "Unit", "enum": ["mm", "in"]},
        },
    }
    tools = [
        {
            "type": "function",
            "function": {"name": "lookup", "description": "Look up.", "parameters": schema},
        }
    ]
    request: dict[str, Any] = {"model": "command-r"}
    history, _, message = oai_messages_to_cohere_messages(
        [ASK, CALLED, RESULT], {"tools": tools}, request
    )
    assert request["tools"] == [
        {
            "name": "lookup",
            "description": "Look up.",
            "parameter_definitions": {
                "q": {"description": "What to look up", "type": "string", "required": True},
                "unit": {
                    "description": "Unit. Possible values are mm, in.",
                    "type": "string",
                    "required": True,
                },
            },
        }
    ]
    assert request["tool_results"] == [
        {"call": {"name": "lookup", "parameters": {"q": "x"}}, "outputs": [{"value": "found"}]}
    ]
    assert request["force_single_step"] is False
    assert message == ""
    assert history == [
        {"role": "USER", "message": "What is rain?"},
        {"role": "CHATBOT", "message": "Let me check."},
    ]


def test_cohere_v1_continues_as_the_chatbot_after_a_user_turn_with_results() -> None:
    request: dict[str, Any] = {}
    later = {"role": "user", "content": "And snow?"}
    history, _, message = oai_messages_to_cohere_messages([ASK, CALLED, RESULT, later], {}, request)
    assert history[-2:] == [
        {"role": "USER", "message": "And snow?"},
        {"role": "CHATBOT", "message": "Please continue."},
    ]
    assert message == ""
