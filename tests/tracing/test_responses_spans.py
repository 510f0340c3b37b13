"""Model calls over OpenAI's Responses API (``api_type: "responses"``) traced as chat calls
are: a ``chat {model}`` span with the GenAI attributes, the token counts' cached and reasoning
parts included."""

from __future__ import annotations

from parley.testing import FakeLLMServer
from tests._responses_chat import COST, tool_chat

from .conftest import Traced


def test_a_responses_call_is_a_chat_span_with_its_usage(
    fake_llm: FakeLLMServer, traced: Traced
) -> None:
    tool_chat(fake_llm)

    assert {r.path for r in fake_llm.received} == {"/v1/responses"}
    calls = traced.named("chat o4-mini")
    assert len(calls) == 2
    first = calls[0].attributes
    assert first is not None
    assert {k: v for k, v in first.items() if k.startswith("gen_ai.")} == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.system": "openai",
        "gen_ai.request.model": "o4-mini",
        "gen_ai.response.model": "o4-mini",
        "gen_ai.response.id": "resp_fake_1",
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 1000,
        "gen_ai.usage.output_tokens": 50,
        "gen_ai.usage.cache_read.input_tokens": 400,
        "gen_ai.usage.reasoning.output_tokens": 30,
        "gen_ai.agent.name": "assistant",
    }
    assert first["parley.cost_usd"] == COST
    assert first["parley.cached"] is False
    last = calls[1].attributes
    assert last is not None
    assert last["gen_ai.response.finish_reasons"] == ("stop",)
    chat = traced.one("chat user -> assistant").attributes
    assert chat is not None
    assert chat["parley.cost_usd"] == 2 * COST
