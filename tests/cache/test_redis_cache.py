from __future__ import annotations

import contextlib
import pickle
import socket
import sys
import time
from collections.abc import Iterator

import pytest
import redis
from openai.types.chat import ChatCompletion

from parley.cache import AbstractCache, Cache, RedisCache


@pytest.fixture
def raw(redis_url: str) -> Iterator[redis.Redis]:
    """A plain redis-py client on the same database, to see what RedisCache wrote."""
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.mark.redis
def test_round_trip_of_plain_values(redis_url: str) -> None:
    values = {"str": "text", "int": 3, "dict": {"a": [1, (2, 3)]}, "bytes": b"\0x"}
    with RedisCache(1, redis_url) as cache:
        for key, value in values.items():
            cache.set(key, value)
        for key, value in values.items():
            assert cache.get(key) == value


@pytest.mark.redis
def test_round_trip_of_a_chat_completion(redis_url: str, chat_completion: ChatCompletion) -> None:
    with RedisCache(42, redis_url) as cache:
        cache.set("request", chat_completion)
    with RedisCache(42, redis_url) as cache:
        restored = cache.get("request")
    assert isinstance(restored, ChatCompletion)
    assert restored == chat_completion
    assert restored.choices[0].message.content == "the cached answer"


@pytest.mark.redis
def test_keys_and_values_are_laid_out_as_in_autogen(redis_url: str, raw: redis.Redis) -> None:
    with RedisCache(7, redis_url) as cache:
        cache.set("my-key", {"v": 1})
    assert raw.keys("*") == [b"autogen:7:my-key"]
    stored = raw.get("autogen:7:my-key")
    assert isinstance(stored, bytes)
    assert pickle.loads(stored) == {"v": 1}


@pytest.mark.redis
def test_reads_entries_written_by_others(redis_url: str, raw: redis.Redis) -> None:
    raw.set("autogen:s:k", pickle.dumps(["written", "elsewhere"]))
    with RedisCache("s", redis_url) as cache:
        assert cache.get("k") == ["written", "elsewhere"]


@pytest.mark.redis
def test_missing_key_returns_default(redis_url: str) -> None:
    with RedisCache(1, redis_url) as cache:
        assert cache.get("nope") is None
        assert cache.get("nope", 17) == 17


@pytest.mark.redis
def test_seeds_isolate_entries(redis_url: str) -> None:
    with RedisCache(1, redis_url) as one, RedisCache(2, redis_url) as two:
        one.set("k", "one")
        two.set("k", "two")
        assert one.get("k") == "one"
        assert two.get("k") == "two"


@pytest.mark.redis
def test_close_is_idempotent_and_a_closed_cache_reconnects(redis_url: str) -> None:
    cache = RedisCache(1, redis_url)
    cache.set("k", "v")
    cache.close()
    cache.close()
    assert cache.get("k") == "v"
    with cache as entered:
        assert entered is cache
        entered.set("k2", "v2")
    with cache:
        assert cache.get("k2") == "v2"
    cache.close()


@pytest.mark.redis
def test_entries_survive_a_new_instance(redis_url: str) -> None:
    with RedisCache(1, redis_url) as cache:
        cache.set("k", "v")
    with RedisCache(1, redis_url) as again:
        assert again.get("k") == "v"


@pytest.mark.redis
def test_cache_redis_factory(redis_url: str) -> None:
    with Cache.redis(cache_seed=9, redis_url=redis_url) as cache:
        assert isinstance(cache.cache, RedisCache)
        assert cache.config == {"cache_seed": "9", "redis_url": redis_url}
        cache.set("k", "v")
        assert cache.get("k") == "v"
    with Cache({"cache_seed": 9, "redis_url": redis_url, "cache_path_root": "unused"}) as again:
        assert again.get("k") == "v"


def test_without_the_redis_package_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)
    with pytest.raises(ImportError, match=r'pip install "parley\[redis\]"'):
        RedisCache(1, "redis://127.0.0.1:6379/0")
    with pytest.raises(ImportError, match=r'pip install "parley\[redis\]"'):
        Cache.redis(redis_url="redis://127.0.0.1:6379/0")


def test_malformed_url_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="redis://"):
        RedisCache(1, "http://127.0.0.1:6379/0")
    with pytest.raises(ValueError, match="redis_url"):
        RedisCache(1, "")


def test_unreachable_server_fails_without_hanging() -> None:
    with port_nobody_listens_on() as port:
        cache = RedisCache(1, f"redis://127.0.0.1:{port}/0")
        started = time.monotonic()
        with pytest.raises(redis.ConnectionError):
            cache.get("k")
        cache.close()
    assert time.monotonic() - started < 15


def test_repr_does_not_show_the_password() -> None:
    cache = Cache.redis(redis_url="redis://:s3cret@127.0.0.1:1/0")
    assert "s3cret" not in repr(cache)
    assert "s3cret" not in repr(cache.cache)
    assert isinstance(cache.cache, AbstractCache)
    cache.close()


@contextlib.contextmanager
def port_nobody_listens_on() -> Iterator[int]:
    """A loopback port that is bound (so no one else takes it) but not listening."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]
