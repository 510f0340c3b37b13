"""Response caches never unpickle, and what other writers put in them cannot make parley act.

The attack these tests replay: code running in the Docker sandbox could write to the host's
``./.cache/<seed>`` and replaced a cached response with a pickle; the next cached replay
unpickled it in the host process and so ran the attacker's code. Each test plants what such code
could write (with diskcache, redis-py or sqlite3 directly, as the attacker would), then replays
the request through ``OpenAIWrapper`` against a real loopback model server.
"""

from __future__ import annotations

import logging
import pickle
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import diskcache
import pytest
import redis

from parley.cache import Cache
from parley.oai import OpenAIWrapper
from parley.testing import FakeLLMServer

HI = [{"role": "user", "content": "hi"}]
SEED = 7
PRICE = [1.0, 2.0]


class Payload:
    """Unpickling this creates ``marker``: proof that a cache ran code it should only read."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (self.marker,))


def _pickle(marker: Path, *, big: bool) -> Any:
    # Big pickles are kept by diskcache in a file beside the database, small ones inline.
    return [Payload(marker), "x" * 100_000] if big else Payload(marker)


@pytest.fixture
def marker(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "outside" / "pwned"
    path.parent.mkdir()
    yield path
    assert not path.exists(), "a cache unpickled a planted entry: the attacker's code ran"


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def _client(server: FakeLLMServer, **extra: Any) -> OpenAIWrapper:
    return OpenAIWrapper(config_list=server.config_list(model="m", price=PRICE), **extra)


def _content(response: Any) -> Any:
    return response.choices[0].message.content


@pytest.mark.parametrize("big", [False, True], ids=["inline", "file"])
def test_a_planted_pickle_in_the_disk_cache_is_never_unpickled(
    fake_llm: FakeLLMServer,
    in_tmp: Path,
    marker: Path,
    big: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake_llm.responder = lambda request: "the real answer"
    assert _content(_client(fake_llm, cache_seed=SEED).create(messages=HI)) == "the real answer"
    directory = in_tmp / ".cache" / str(SEED)
    with diskcache.Cache(str(directory)) as attacker:
        keys = list(attacker)
        assert keys, "the first request should have been cached"
        for key in keys:
            attacker.set(key, _pickle(marker, big=big))

    with caplog.at_level(logging.WARNING):
        replay = _client(fake_llm, cache_seed=SEED).create(messages=HI)
    assert not marker.exists()
    assert _content(replay) == "the real answer"
    assert len(fake_llm.requests) == 2  # the planted entry was a miss
    assert "pickle" in caplog.text  # and a logged one
    # the miss stored a good entry again, which the next replay uses
    again = _client(fake_llm, cache_seed=SEED).create(messages=HI)
    assert _content(again) == "the real answer"
    assert len(fake_llm.requests) == 2


@pytest.mark.redis
def test_a_planted_pickle_in_redis_is_never_unpickled(
    fake_llm: FakeLLMServer, redis_url: str, marker: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake_llm.responder = lambda request: "the real answer"
    with Cache.redis(cache_seed=SEED, redis_url=redis_url) as cache:
        assert _content(_client(fake_llm).create(messages=HI, cache=cache)) == "the real answer"
    attacker = redis.Redis.from_url(redis_url)
    try:
        keys = attacker.keys(f"autogen:{SEED}:*")
        assert keys, "the first request should have been cached"
        for key in keys:
            attacker.set(key, pickle.dumps(Payload(marker)))
    finally:
        attacker.close()

    with caplog.at_level(logging.WARNING), Cache.redis(SEED, redis_url) as cache:
        replay = _client(fake_llm).create(messages=HI, cache=cache)
        assert not marker.exists()
        assert _content(replay) == "the real answer"
        assert len(fake_llm.requests) == 2
        assert "not JSON" in caplog.text
        assert _content(_client(fake_llm).create(messages=HI, cache=cache)) == "the real answer"
    assert len(fake_llm.requests) == 2


def test_an_entry_naming_a_file_outside_the_cache_is_refused(
    fake_llm: FakeLLMServer, in_tmp: Path, tmp_path: Path
) -> None:
    fake_llm.responder = lambda request: "the real answer"
    _client(fake_llm, cache_seed=SEED).create(messages=HI)
    # A file outside the cache holding what looks like a cached response.
    elsewhere = tmp_path / "outside.json"
    elsewhere.write_text('"a value from outside the cache"')
    database = in_tmp / ".cache" / str(SEED) / "cache.db"
    with sqlite3.connect(database) as db:
        db.execute(
            "UPDATE Cache SET mode = 3, filename = ?, value = NULL, size = 1", (str(elsewhere),)
        )
    db.close()

    replay = _client(fake_llm, cache_seed=SEED).create(messages=HI)
    assert _content(replay) == "the real answer"
    assert len(fake_llm.requests) == 2
    assert elsewhere.exists()  # replacing the entry did not delete the file it named


def test_planted_rows_cannot_make_parley_delete_files_outside_the_cache(
    fake_llm: FakeLLMServer, in_tmp: Path, tmp_path: Path
) -> None:
    fake_llm.responder = lambda request: f"answer {len(fake_llm.requests)}"
    _client(fake_llm, cache_seed=SEED).create(messages=HI)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    database = in_tmp / ".cache" / str(SEED) / "cache.db"
    with sqlite3.connect(database) as db:
        # An entry that has expired: diskcache culls it (and removes "its" file) on a write.
        db.execute(
            "INSERT INTO Cache (key, raw, store_time, expire_time, access_time, size, mode,"
            " filename, value) VALUES ('planted', 1, 0, 1, 0, 0, 2, ?, NULL)",
            (str(victim),),
        )
    db.close()

    client = _client(fake_llm, cache_seed=SEED)
    client.create(messages=[{"role": "user", "content": "something new"}])  # a write
    assert victim.read_text() == "precious"


@pytest.mark.parametrize(
    "planted",
    [
        # diskcache sets the rest on its Cache object: here the database's location
        {"_directory": "ELSEWHERE"},
        # passes disk_* to the Disk as constructor arguments and attributes
        {"disk__directory": "ELSEWHERE", "disk_min_file_size": 0},
        # and runs sqlite_* as PRAGMAs
        {"sqlite_journal_mode": "delete", "sqlite_synchronous": 0},
        # and keeps the rest as its own settings: here, evict every entry on every write
        {"size_limit": 0, "cull_limit": 100},
    ],
    ids=["cache-attribute", "disk-attribute", "pragma", "policy"],
)
def test_a_foreign_settings_table_changes_nothing(
    fake_llm: FakeLLMServer, in_tmp: Path, tmp_path: Path, planted: dict[str, Any]
) -> None:
    fake_llm.responder = lambda request: "y" * 100_000  # big enough for a file of its own
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    directory = in_tmp / ".cache" / str(SEED)
    directory.mkdir(parents=True)
    settings = [(k, str(elsewhere) if v == "ELSEWHERE" else v) for k, v in planted.items()]
    with sqlite3.connect(directory / "cache.db") as db:
        db.execute("CREATE TABLE Settings (key TEXT NOT NULL UNIQUE, value)")
        db.executemany("INSERT INTO Settings VALUES (?, ?)", settings)
    db.close()

    first = _client(fake_llm, cache_seed=SEED).create(messages=HI)
    replay = _client(fake_llm, cache_seed=SEED).create(messages=HI)
    assert _content(replay) == _content(first)
    assert len(fake_llm.requests) == 1
    assert list(elsewhere.iterdir()) == []  # nothing was written outside the cache
    with sqlite3.connect(directory / "cache.db") as db:
        pragmas = [db.execute(f"PRAGMA {name}").fetchone()[0] for name in ("journal_mode",)]
    db.close()
    assert pragmas == ["wal"]


# -- cached replays equal the originals -------------------------------------------------------


def _tool_reply(server: FakeLLMServer) -> None:
    server.add_reply(
        "calling a tool",
        tool_calls=[{"name": "add", "arguments": {"a": 1, "b": 2}, "id": "call_1"}],
        usage={"prompt_tokens": 11, "completion_tokens": 7},
    )


def _assert_same_response(replay: Any, original: Any) -> None:
    assert type(replay) is type(original)
    assert replay is not original
    assert replay.id == original.id
    assert replay.model == original.model
    assert replay.choices == original.choices
    assert replay.choices[0].message.content == "calling a tool"
    call = replay.choices[0].message.tool_calls[0]
    assert (call.id, call.function.name, call.function.arguments) == (
        "call_1",
        "add",
        '{"a": 1, "b": 2}',
    )
    assert replay.usage == original.usage
    assert replay.usage.total_tokens == 18
    assert replay.cost == original.cost == pytest.approx((11 * 1.0 + 7 * 2.0) / 1000)


def _round_trip(server: FakeLLMServer, cache: Any) -> None:
    _tool_reply(server)
    client = _client(server)
    original = client.create(messages=HI, cache=cache)
    replay = client.create(messages=HI, cache=cache)
    assert len(server.requests) == 1
    _assert_same_response(replay, original)
    assert client.extract_text_or_completion_object(replay) == [replay.choices[0].message]
    # A replay is a new object each time: changing one does not change the cache.
    replay.choices[0].message.content = "changed by the caller"
    again = client.create(messages=HI, cache=cache)
    assert again.choices[0].message.content == "calling a tool"


def test_disk_replays_equal_the_originals(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    with Cache.disk(cache_seed=SEED, cache_path_root=tmp_path) as cache:
        _round_trip(fake_llm, cache)


@pytest.mark.redis
def test_redis_replays_equal_the_originals(fake_llm: FakeLLMServer, redis_url: str) -> None:
    with Cache.redis(cache_seed=SEED, redis_url=redis_url) as cache:
        _round_trip(fake_llm, cache)


def test_in_memory_replays_equal_the_originals(fake_llm: FakeLLMServer) -> None:
    with Cache.in_memory(cache_seed=SEED) as cache:
        _round_trip(fake_llm, cache)


class NamespaceClient:
    """A custom model client answering with a SimpleNamespace tree, as AutoGen's docs show."""

    calls = 0

    def __init__(self, config: dict[str, Any], **kwargs: Any) -> None:
        self.model = config["model"]

    def create(self, params: dict[str, Any]) -> SimpleNamespace:
        NamespaceClient.calls += 1
        message = SimpleNamespace(
            content=f"answer {NamespaceClient.calls}", tool_calls=None, function_call=None
        )
        return SimpleNamespace(
            choices=[SimpleNamespace(message=message, finish_reason="stop")],
            model=self.model,
            usage=SimpleNamespace(prompt_tokens=3, completion_tokens=4, total_tokens=7),
            extra={"scores": [0.5, 1.5], "tags": ("a", "b"), "nested": {"n": None}},
        )

    def message_retrieval(self, response: Any) -> list[Any]:
        return [choice.message.content for choice in response.choices]

    def cost(self, response: Any) -> float:
        return 0.25

    @staticmethod
    def get_usage(response: Any) -> dict[str, Any]:
        return {
            "prompt_tokens": response.usage.prompt_tokens,
            "completion_tokens": response.usage.completion_tokens,
            "total_tokens": response.usage.total_tokens,
            "cost": response.cost,
            "model": response.model,
        }


@pytest.mark.parametrize("backend", ["disk", "memory"])
def test_a_custom_clients_namespace_response_is_cached(tmp_path: Path, backend: str) -> None:
    NamespaceClient.calls = 0
    client = OpenAIWrapper(config_list=[{"model": "custom", "model_client_cls": "NamespaceClient"}])
    client.register_model_client(NamespaceClient)
    cache = (
        Cache.disk(cache_seed=SEED, cache_path_root=tmp_path)
        if backend == "disk"
        else Cache.in_memory(SEED)
    )
    with cache:
        original = client.create(messages=HI, cache=cache)
        replay = client.create(messages=HI, cache=cache)
    assert NamespaceClient.calls == 1
    assert isinstance(replay, SimpleNamespace)
    assert client.extract_text_or_completion_object(replay) == ["answer 1"]
    assert replay.choices[0].message == original.choices[0].message
    assert replay.choices[0].finish_reason == "stop"
    assert replay.usage == original.usage
    assert replay.cost == original.cost == 0.25
    assert replay.extra == {"scores": [0.5, 1.5], "tags": ["a", "b"], "nested": {"n": None}}


def test_a_response_that_cannot_be_stored_is_not_cached_and_warned_about_once(
    fake_llm: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    class Opaque:
        """Not one of the types a cache entry may hold."""

    class OpaqueClient(NamespaceClient):
        def create(self, params: dict[str, Any]) -> SimpleNamespace:
            response = super().create(params)
            response.extra = Opaque()
            return response

    NamespaceClient.calls = 0
    client = OpenAIWrapper(config_list=[{"model": "custom", "model_client_cls": "OpaqueClient"}])
    client.register_model_client(OpaqueClient)
    with caplog.at_level(logging.WARNING), Cache.in_memory(SEED) as cache:
        for _ in range(3):
            client.create(messages=HI, cache=cache)
    assert NamespaceClient.calls == 3
    warnings = [r for r in caplog.records if "Opaque" in r.getMessage()]
    assert len(warnings) == 1
    assert "not cached" in warnings[0].getMessage()
