"""Cached and reasoning token counts in usage summaries: ``OpenAIWrapper``'s summaries,
``gather_usage_summary`` / ``ChatResult.cost``, ``parley.usage`` and the runtime log, beside
AutoGen's four counts, which keep their shape."""

from __future__ import annotations

import json
from typing import Any

import parley as autogen
from parley.testing import FakeLLMServer

MODEL = "o3-mini"
AUTOGEN_KEYS = {"cost", "prompt_tokens", "completion_tokens", "total_tokens"}


def _chat(server: FakeLLMServer, usage: dict[str, Any] | None) -> autogen.ChatResult:
    for text in ("First answer.", "Done. TERMINATE"):
        server.add_reply(text, usage=usage)
    config = {"config_list": server.config_list(MODEL), "cache_seed": None}
    bot = autogen.AssistantAgent("bot", llm_config=config)
    user = autogen.UserProxyAgent(
        "user",
        human_input_mode="NEVER",
        code_execution_config=False,
        default_auto_reply="go on",
    )
    return user.initiate_chat(bot, message="start", max_turns=2)


def test_reasoning_and_cached_counts_appear_in_every_summary(fake_llm: FakeLLMServer) -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 40,
        "reasoning_tokens": 30,
        "cached_tokens": 64,
    }
    result = _chat(fake_llm, usage)
    for kind in ("usage_including_cached_inference", "usage_excluding_cached_inference"):
        entry = result.cost[kind][MODEL]
        assert set(entry) >= AUTOGEN_KEYS
        assert entry["prompt_tokens"] == 200
        assert entry["completion_tokens"] == 80
        assert entry["reasoning_tokens"] == 60
        assert entry["cached_tokens"] == 128
        assert "cache_creation_tokens" not in entry  # never reported by this model
    assert (result.usage.reasoning_tokens, result.usage.cached_tokens) == (60, 128)
    assert (
        result.usage.to_autogen()["usage_including_cached_inference"][MODEL]["reasoning_tokens"]
        == 60
    )


def test_without_details_the_summary_has_autogens_shape(fake_llm: FakeLLMServer) -> None:
    result = _chat(fake_llm, None)
    for kind in ("usage_including_cached_inference", "usage_excluding_cached_inference"):
        assert set(result.cost[kind][MODEL]) == AUTOGEN_KEYS
        assert set(result.usage.summary()[MODEL]) == AUTOGEN_KEYS


def test_wrapper_summary_sums_the_counts(fake_llm: FakeLLMServer) -> None:
    client = autogen.OpenAIWrapper(config_list=fake_llm.config_list(MODEL), cache_seed=None)
    for reasoning in (10, 20):
        fake_llm.add_reply("ok", usage={"completion_tokens": 30, "reasoning_tokens": reasoning})
        client.create(messages=[{"role": "user", "content": "hi"}])
    assert client.total_usage_summary is not None
    assert client.total_usage_summary[MODEL]["reasoning_tokens"] == 30
    assert client.actual_usage_summary is not None
    assert client.actual_usage_summary[MODEL]["reasoning_tokens"] == 30


def test_runtime_log_records_the_counts(fake_llm: FakeLLMServer, tmp_path: Any) -> None:
    log = tmp_path / "run.log"
    autogen.runtime_logging.start(logger_type="file", config={"filename": str(log)})
    try:
        _chat(fake_llm, {"completion_tokens": 40, "reasoning_tokens": 25})
    finally:
        autogen.runtime_logging.stop()
    records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    ends = [r for r in records if r.get("event_name") == "chat_end"]
    assert ends, records[-3:]
    state = ends[-1].get("json_state")
    state = json.loads(state) if isinstance(state, str) else (state or ends[-1])
    assert state["reasoning_tokens"] == 50
