"""Caching in OpenAIWrapper: off by default, hits send nothing, keys never hold credentials."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from openai.types import Completion
from openai.types.chat import ChatCompletion

from parley.cache import Cache
from parley.oai import OpenAIWrapper, _cache_io, _cache_key
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


class RecordingCache:
    """A cache= object of the user's own: a plain dict, keeping exactly what it is given."""

    def __init__(self) -> None:
        self.entries: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.entries.get(key, default)

    def set(self, key: str, value: Any) -> None:
        self.entries[key] = value

    def close(self) -> None:
        pass

    def __enter__(self) -> RecordingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def test_responses_are_stored_as_tagged_json_documents(fake_llm: FakeLLMServer) -> None:
    fake_llm.add_reply("stored", usage={"prompt_tokens": 2, "completion_tokens": 3})
    cache = RecordingCache()
    client = OpenAIWrapper(config_list=fake_llm.config_list(model="m", price=[1, 1]))
    response = client.create(messages=HI, cache=cache)
    ((key, document),) = cache.entries.items()
    assert key == _cache_key.cache_key({"messages": HI, "model": "m"})
    assert json.loads(json.dumps(document)) == document  # plain JSON data
    assert document["parley_cache"] == 1
    assert document["kind"] == "openai.ChatCompletion"
    value = document["value"]
    assert value["choices"][0]["message"]["content"] == "stored"
    assert value["cost"] == response.cost == pytest.approx(0.005)
    for runtime in ("message_retrieval_function", "config_id", "pass_filter"):
        assert runtime not in value


@pytest.mark.parametrize(
    "stored",
    [
        "a string",
        {"choices": []},  # an untagged dict
        {"parley_cache": 2, "kind": "openai.ChatCompletion", "value": {}},
        {"parley_cache": 1, "kind": "builtins.eval", "value": {"source": "1"}},
        {"parley_cache": 1, "kind": "openai.ChatCompletion", "value": ["not", "a", "dict"]},
        {"parley_cache": 1, "kind": "namespace", "value": {"dict": {"a": 1}}},
        {"parley_cache": 1, "kind": "namespace", "value": {"namespace": {"a": {"b": 1}}}},
        {"parley_cache": 1, "kind": "namespace", "value": {"unknown_tag": {}}},
    ],
    ids=["str", "untagged", "version", "foreign-kind", "not-a-dict", "dict-top", "bare", "tag"],
)
def test_entries_that_are_not_parley_documents_are_misses(
    fake_llm: FakeLLMServer, caplog: pytest.LogCaptureFixture, stored: Any
) -> None:
    fake_llm.responder = lambda request: "fresh"
    cache = RecordingCache()
    client = OpenAIWrapper(config_list=fake_llm.config_list())
    key = _cache_key.cache_key({"messages": HI, "model": "fake-model"})
    cache.entries[key] = stored
    with caplog.at_level(logging.WARNING):
        assert client.create(messages=HI, cache=cache).choices[0].message.content == "fresh"
    assert len(fake_llm.requests) == 1
    assert "not a response parley stored" in caplog.text
    assert cache.entries[key]["parley_cache"] == 1  # replaced by a good entry


def test_a_response_the_sdk_built_leniently_replays() -> None:
    # A lax OpenAI-compatible server: no "created", finish_reason null, a string token count.
    # The SDK keeps such values as they came; the cache must not lose the response over them.
    raw = {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "finish_reason": None, "message": {"role": "assistant"}}],
        "usage": {"prompt_tokens": "3"},
    }
    response = ChatCompletion.construct(**raw)
    response.cost = 0.0
    document = json.loads(json.dumps(_cache_io.encode_response(response)))
    replay = _cache_io.decode_response(document)
    assert isinstance(replay, ChatCompletion)
    assert replay.choices[0].finish_reason is None
    assert replay.usage is not None
    assert replay.usage.prompt_tokens == "3"
    assert replay.cost == 0.0


def test_a_legacy_completion_round_trips() -> None:
    completion = Completion.model_validate(
        {
            "id": "c",
            "object": "text_completion",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "text": "t", "finish_reason": "stop", "logprobs": None}],
        }
    )
    document = json.loads(json.dumps(_cache_io.encode_response(completion)))
    assert document["kind"] == "openai.Completion"
    assert _cache_io.decode_response(document) == completion


def test_namespace_trees_keep_dicts_and_namespaces_apart() -> None:
    response = SimpleNamespace(
        choices=[SimpleNamespace(message=SimpleNamespace(content="x", tool_calls=None))],
        model="m",
        meta={"namespace": {"looks": "like a tag"}, "dict": [1, (2, 3)]},
        cost=0.5,
        config_id=3,  # set by the wrapper on a previous call: not part of the reply
    )
    document = json.loads(json.dumps(_cache_io.encode_response(response)))
    replay = _cache_io.decode_response(document)
    assert replay == SimpleNamespace(
        choices=[SimpleNamespace(message=SimpleNamespace(content="x", tool_calls=None))],
        model="m",
        meta={"namespace": {"looks": "like a tag"}, "dict": [1, [2, 3]]},
        cost=0.5,
    )


@pytest.mark.parametrize(
    ("response", "named"),
    [
        (
            SimpleNamespace(choices=[SimpleNamespace(message=b"bytes")]),
            "bytes (at .choices[0].message)",
        ),
        (SimpleNamespace(meta={1: "int key"}), "dict key of type int (at .meta)"),
        ({"choices": []}, "a response of type dict"),
        (type("MyResponse", (), {})(), "a response of type MyResponse"),
    ],
    ids=["bytes", "int-key", "dict", "custom-class"],
)
def test_what_cannot_be_stored_is_named(response: Any, named: str) -> None:
    with pytest.raises(_cache_io.Unstorable) as info:
        _cache_io.encode_response(response)
    assert named in str(info.value)
