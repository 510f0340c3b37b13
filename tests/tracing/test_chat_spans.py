"""The spans of a chat on the fake LLM: their tree, their GenAI attributes, their content."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from parley import AssistantAgent, ChatResult, UserProxyAgent
from parley.testing import FakeLLMServer

from .._tool_code_chat import tool_and_code_agents
from .conftest import Traced

USAGES = [
    {"prompt_tokens": 11, "completion_tokens": 3},
    {"prompt_tokens": 20, "completion_tokens": 7},
    {"prompt_tokens": 30, "completion_tokens": 1},
]


def tool_and_code_chat(fake_llm: FakeLLMServer, tmp_path: Path, **llm: Any) -> ChatResult:
    """user asks; the assistant calls add, then writes code, then ends the chat."""
    user, assistant = tool_and_code_agents(
        fake_llm, tmp_path, system_message="You add numbers.", usages=USAGES, **llm
    )
    return user.initiate_chat(assistant, message="What is 2+3?", silent=True)


def test_the_span_tree_follows_the_chat(
    fake_llm: FakeLLMServer, tmp_path: Path, traced: Traced
) -> None:
    tool_and_code_chat(fake_llm, tmp_path)
    assert traced.outline() == [
        "chat user -> assistant",
        "  invoke_agent assistant",
        "    reply_func generate_oai_reply",
        "      chat fake-model",
        "  invoke_agent user",
        "    reply_func generate_tool_calls_reply",
        "      execute_tool add",
        "  invoke_agent assistant",
        "    reply_func generate_oai_reply",
        "      chat fake-model",
        "  invoke_agent user",
        "    reply_func generate_code_execution_reply",
        "      execute_code",
        "  invoke_agent assistant",
        "    reply_func generate_oai_reply",
        "      chat fake-model",
        "  invoke_agent user",
        "    reply_func check_termination_and_human_reply",
        "  summarize last_msg",
    ]
    # one trace; every span ended inside its parent
    spans = traced.spans()
    assert len({s.context.trace_id for s in spans if s.context}) == 1
    for span in spans:
        parent = traced.parent(span)
        if parent is not None:
            assert parent.start_time <= span.start_time <= span.end_time <= parent.end_time


def test_model_calls_carry_the_genai_attributes(
    fake_llm: FakeLLMServer, tmp_path: Path, traced: Traced
) -> None:
    tool_and_code_chat(fake_llm, tmp_path, temperature=0.25, max_tokens=64)
    calls = traced.named("chat fake-model")
    assert [
        (c.attributes["gen_ai.usage.input_tokens"], c.attributes["gen_ai.usage.output_tokens"])
        for c in calls
    ] == [(u["prompt_tokens"], u["completion_tokens"]) for u in USAGES]
    first = calls[0]
    assert first.kind.name == "CLIENT"
    assert {k: first.attributes[k] for k in first.attributes if k.startswith("gen_ai.")} == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.system": "openai",
        "gen_ai.request.model": "fake-model",
        "gen_ai.request.temperature": 0.25,
        "gen_ai.request.max_tokens": 64,
        "gen_ai.response.model": "fake-model",
        "gen_ai.response.id": "chatcmpl-fake-1",
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 11,
        "gen_ai.usage.output_tokens": 3,
        "gen_ai.agent.name": "assistant",
    }
    assert first.attributes["parley.purpose"] == "reply"
    assert first.attributes["parley.cached"] is False
    assert first.attributes["parley.cost_usd"] == 0.0  # fake-model has no price
    assert calls[2].attributes["gen_ai.response.finish_reasons"] == ("stop",)


def test_priced_calls_report_their_cost_and_the_chat_its_totals(
    fake_llm: FakeLLMServer, tmp_path: Path, traced: Traced
) -> None:
    # $1 per 1k prompt tokens, $2 per 1k completion tokens
    result = tool_and_code_chat(fake_llm, tmp_path, price=[1.0, 2.0])
    costs = [c.attributes["parley.cost_usd"] for c in traced.named("chat fake-model")]
    assert costs == [
        (u["prompt_tokens"] * 1.0 + u["completion_tokens"] * 2.0) / 1000 for u in USAGES
    ]
    chat = traced.one("chat user -> assistant")
    attrs = chat.attributes
    assert attrs["gen_ai.operation.name"] == "invoke_workflow"
    assert attrs["parley.chat.id"] == result.run_id == attrs["gen_ai.conversation.id"]
    assert "parley.chat.parent_id" not in attrs
    assert attrs["parley.termination_reason"] == result.termination_reason
    assert attrs["parley.cost_usd"] == result.usage.cost > 0
    assert attrs["parley.usage.input_tokens"] == sum(u["prompt_tokens"] for u in USAGES)
    assert attrs["parley.usage.output_tokens"] == sum(u["completion_tokens"] for u in USAGES)
    assert attrs["parley.llm_calls"] == 3


def test_tool_code_and_turn_attributes(
    fake_llm: FakeLLMServer, tmp_path: Path, traced: Traced
) -> None:
    tool_and_code_chat(fake_llm, tmp_path)
    tool = traced.one("execute_tool add")
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "add"
    assert (
        tool.attributes["gen_ai.tool.call.id"]
        == fake_llm.requests[1]["messages"][-1]["tool_call_id"]
    )
    assert tool.attributes["gen_ai.agent.name"] == "user"
    assert tool.attributes["parley.tool.success"] is True
    assert tool.status.status_code.name == "UNSET"
    code = traced.one("execute_code")
    assert code.attributes["parley.code.languages"] == ("python",)
    assert code.attributes["parley.code.exit_code"] == 0
    assert code.status.status_code.name == "UNSET"
    turn = traced.named("invoke_agent assistant")[0]
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["gen_ai.agent.name"] == "assistant"
    assert turn.attributes["parley.turn.sender"] == "user"


def test_content_is_left_out_by_default(
    fake_llm: FakeLLMServer, tmp_path: Path, traced: Traced
) -> None:
    tool_and_code_chat(fake_llm, tmp_path)
    shown = json.dumps(
        [dict(s.attributes or {}) for s in traced.spans()]
        + [[dict(e.attributes or {}) for e in s.events] for s in traced.spans()]
    )
    for secret in ("What is 2+3?", "You add numbers.", "print(2 + 3)", "TERMINATE", "sk-"):
        assert secret not in shown
    assert "gen_ai.input.messages" not in shown
    assert "gen_ai.tool.call.arguments" not in shown


def test_content_with_capture_content(
    fake_llm: FakeLLMServer, tmp_path: Path, traced_content: Traced
) -> None:
    tool_and_code_chat(fake_llm, tmp_path)
    traced = traced_content
    first = traced.named("chat fake-model")[0].attributes
    assert json.loads(first["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "You add numbers."}
    ]
    assert json.loads(first["gen_ai.input.messages"]) == [
        {"role": "user", "name": "user", "parts": [{"type": "text", "content": "What is 2+3?"}]}
    ]
    assert json.loads(first["gen_ai.output.messages"]) == [
        {
            "role": "assistant",
            "parts": [
                {
                    "type": "tool_call",
                    "id": "call_fake_1",
                    "name": "add",
                    "arguments": json.dumps({"a": 2, "b": 3}),
                }
            ],
            "finish_reason": "tool_calls",
        }
    ]
    assert json.loads(first["gen_ai.tool.definitions"])[0]["function"]["name"] == "add"
    second = traced.named("chat fake-model")[1].attributes
    sent = json.loads(second["gen_ai.input.messages"])
    assert sent[-1] == {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "call_fake_1", "response": "5"}],
    }
    tool = traced.one("execute_tool add").attributes
    assert json.loads(tool["gen_ai.tool.call.arguments"]) == {"a": 2, "b": 3}
    assert tool["gen_ai.tool.call.result"] == "5"
    code = traced.one("execute_code").attributes
    assert code["parley.code.source"] == "print(2 + 3)"
    assert code["parley.code.output"].strip() == "5"
    chat = traced.one("chat user -> assistant").attributes
    assert chat["parley.chat.message"] == "What is 2+3?"
    # no credential anywhere, although the config list holds an api_key
    key = fake_llm.config_list()[0]["api_key"]
    for span in traced.spans():
        assert key not in json.dumps(dict(span.attributes or {}))


def test_the_attribute_names_are_the_conventions_names(
    fake_llm: FakeLLMServer, tmp_path: Path, traced_content: Traced
) -> None:
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes

    known = {
        value
        for name, value in vars(gen_ai_attributes).items()
        if name.startswith("GEN_AI_") and isinstance(value, str)
    }
    tool_and_code_chat(fake_llm, tmp_path, temperature=0.5, max_tokens=10)
    used = {k for s in traced_content.spans() for k in (s.attributes or {})}
    gen_ai = {k for k in used if k.startswith("gen_ai.")}
    assert len(gen_ai) > 15
    assert gen_ai <= known, gen_ai - known
    assert used - gen_ai == {k for k in used if k.startswith("parley.")}


def test_a_fallback_and_a_reflection_summary(fake_llm: FakeLLMServer, traced: Traced) -> None:
    config_list = fake_llm.config_list("first-model") + fake_llm.config_list("second-model")
    assistant = AssistantAgent("assistant", llm_config={"config_list": config_list})
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    fake_llm.add_error(404, "The model `first-model` does not exist")
    fake_llm.add_reply("TERMINATE")
    fake_llm.add_reply("They agreed.", usage={"prompt_tokens": 9, "completion_tokens": 3})
    user.initiate_chat(assistant, message="hi", summary_method="reflection_with_llm", silent=True)
    assert traced.outline() == [
        "chat user -> assistant",
        "  invoke_agent assistant",
        "    reply_func generate_oai_reply",
        "      chat first-model",
        "      chat second-model",
        "  invoke_agent user",
        "    reply_func check_termination_and_human_reply",
        "  summarize reflection_with_llm",
        "    chat first-model",
    ]
    failed, answered = traced.named("chat first-model")[0], traced.one("chat second-model")
    assert failed.status.status_code.name == "ERROR"
    assert failed.attributes["error.type"] == "NotFoundError"
    assert failed.attributes["parley.config_id"] == 0
    assert answered.status.status_code.name == "UNSET"
    assert answered.attributes["parley.config_id"] == 1
    summary_call = traced.named("chat first-model")[1]
    assert summary_call.attributes["parley.purpose"] == "summary"
    assert summary_call.attributes["gen_ai.usage.input_tokens"] == 9
