"""Caching in OpenAIWrapper: off by default, hits send nothing, keys never hold credentials."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from parley.cache import Cache
from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer

HI = [{"role": "user", "content": "hi"}]
SECRET = "sk-parley-secret-0123456789"


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_caching_is_off_by_default_and_creates_no_files(
    fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fake_llm.add_reply("first").add_reply("second")
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    answers = [client.create(messages=HI).choices[0].message.content for _ in range(2)]
    assert answers == ["first", "second"]  # no stale cached reply
    assert _files(tmp_path) == []
    explicit_off = OpenAIWrapper(config_list=fake_llm.config_list(), cache_seed=None)
    fake_llm.add_reply("third")
    explicit_off.create(messages=HI)
    assert _files(tmp_path) == []


def test_cache_seed_hit_sends_no_request(
    fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fake_llm.add_reply("cached answer", usage={"prompt_tokens": 10, "completion_tokens": 10})
    client = OpenAIWrapper(config_list=fake_llm.config_list(model="m", price=[1, 1]), cache_seed=7)
    first = client.create(messages=HI)
    second = client.create(messages=HI)
    assert second.choices[0].message.content == "cached answer"
    assert len(fake_llm.requests) == 1
    assert second.cost == first.cost
    assert (tmp_path / ".cache" / "7").is_dir()
    # a hit counts in the total summary only
    assert client.actual_usage_summary["m"]["total_tokens"] == 20
    assert client.total_usage_summary["m"]["total_tokens"] == 40
    # a new wrapper (a new process, say) finds the same entry on disk
    again = OpenAIWrapper(config_list=fake_llm.config_list(model="m", price=[1, 1]), cache_seed=7)
    assert again.create(messages=HI).choices[0].message.content == "cached answer"
    assert len(fake_llm.requests) == 1


def test_every_request_field_is_in_the_key(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda req: f"t={req.get('temperature')} tools={len(req.get('tools', []))}"
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    with Cache.in_memory(cache_seed=1) as cache:
        client = OpenAIWrapper(config_list=fake_llm.config_list())
        variants = [
            {},
            {"temperature": 0.9},
            {"tools": [tool]},
            {"tools": [tool], "tool_choice": "auto"},
            {"response_format": {"type": "json_object"}},
        ]
        for v in variants:
            client.create(messages=HI, cache=cache, **v)
        assert len(fake_llm.requests) == len(variants)
        for v in variants:
            client.create(messages=HI, cache=cache, **v)
        assert len(fake_llm.requests) == len(variants)


def test_explicit_cache_wins_over_cache_seed(
    fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fake_llm.add_reply("x")
    cache = Cache.in_memory()
    client = OpenAIWrapper(config_list=fake_llm.config_list(), cache_seed=3)
    client.create(messages=HI, cache=cache)
    client.create(messages=HI, cache=cache)
    assert len(fake_llm.requests) == 1
    assert _files(tmp_path) == []


def test_api_key_never_reaches_cache_or_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeLLMServer(api_key=SECRET) as server:
        server.add_error(503).add_reply("x")
        client = OpenAIWrapper(config_list=server.config_list(), cache_seed=11)
        with caplog.at_level(logging.DEBUG):
            client.create(messages=HI)
            client.create(messages=HI)
        assert len(server.requests) == 2  # the 503, then the answer; the third call was a hit
    stored = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert stored  # the cache did write
    assert SECRET.encode() not in stored
    assert SECRET not in caplog.text
    assert SECRET not in os.environ.get("OPENAI_API_KEY", "")


@pytest.mark.redis
def test_redis_cache_with_a_real_server(fake_llm: FakeLLMServer, redis_url: str) -> None:
    fake_llm.add_reply("from the model", tool_calls=[{"name": "f", "arguments": {"x": 1}}])
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    with Cache.redis(cache_seed=5, redis_url=redis_url) as cache:
        first = client.create(messages=HI, cache=cache)
        second = client.create(messages=HI, cache=cache)
    assert len(fake_llm.requests) == 1
    assert second.choices[0].message.tool_calls[0].function.name == "f"
    assert second.choices[0].message.content == first.choices[0].message.content
    # another client, another connection: still a hit
    with Cache.redis(cache_seed=5, redis_url=redis_url) as cache:
        OpenAIWrapper(config_list=fake_llm.config_list()).create(messages=HI, cache=cache)
    assert len(fake_llm.requests) == 1
