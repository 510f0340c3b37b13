from __future__ import annotations

import contextlib
import logging
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
def test_round_trip_of_json_values(redis_url: str) -> None:
    values = {"str": "text", "int": 3, "dict": {"a": [1, (2, 3)]}, "unicode": "h\u00e9 \u2603"}
    with RedisCache(1, redis_url) as cache:
        for key, value in values.items():
            cache.set(key, value)
        for key, value in values.items():
            expected = {"a": [1, [2, 3]]} if key == "dict" else value  # tuples come back as lists
            assert cache.get(key) == expected


@pytest.mark.redis
@pytest.mark.parametrize("value", [b"bytes", {1, 2}, object()])
def test_a_value_that_is_not_json_is_a_type_error(redis_url: str, value: object) -> None:
    with RedisCache(1, redis_url) as cache:
        with pytest.raises(
            TypeError, match=f"RedisCache stores JSON values: a {type(value).__name__}"
        ):
            cache.set("k", value)
        assert cache.get("k") is None


@pytest.mark.redis
def test_a_chat_completion_is_stored_as_its_json(
    redis_url: str, chat_completion: ChatCompletion
) -> None:
    # Response objects are encoded by the completion client (parley.oai._cache_io).
    with RedisCache(42, redis_url) as cache:
        with pytest.raises(TypeError, match="ChatCompletion"):
            cache.set("request", chat_completion)
        cache.set("request", chat_completion.model_dump(mode="json"))
    with RedisCache(42, redis_url) as cache:
        restored = cache.get("request")
    assert ChatCompletion.model_validate(restored) == chat_completion


@pytest.mark.redis
def test_keys_are_laid_out_as_in_autogen_and_values_are_json(
    redis_url: str, raw: redis.Redis
) -> None:
    with RedisCache(7, redis_url) as cache:
        cache.set("my-key", {"v": "\u00e9"})
    assert raw.keys("*") == [b"autogen:7:my-key"]
    assert raw.get("autogen:7:my-key") == '{"v": "\u00e9"}'.encode()


@pytest.mark.redis
def test_reads_json_entries_written_by_others(redis_url: str, raw: redis.Redis) -> None:
    raw.set("autogen:s:k", '["written", "elsewhere"]')
    with RedisCache("s", redis_url) as cache:
        assert cache.get("k") == ["written", "elsewhere"]


@pytest.mark.redis
@pytest.mark.parametrize(
    "stored",
    [pickle.dumps(["an", "autogen", "entry"]), b"\xff\xfe", b"not json", b"[" * 100_000],
    ids=["pickle", "not-utf8", "text", "deep"],
)
@pytest.mark.parametrize("decode", [False, True], ids=["bytes", "decode_responses"])
def test_entries_that_are_not_json_are_misses_with_a_warning(
    redis_url: str,
    raw: redis.Redis,
    caplog: pytest.LogCaptureFixture,
    stored: bytes,
    decode: bool,
) -> None:
    raw.set("autogen:s:k", stored)
    url = f"{redis_url}?decode_responses=true" if decode else redis_url
    with RedisCache("s", url) as cache, caplog.at_level(logging.WARNING):
        assert cache.get("k", "default") == "default"
        assert "ignoring the entry for key 'k': it is not JSON" in caplog.text
        cache.set("k", "replaced")
        assert cache.get("k") == "replaced"


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
    cache = Cache.redis(cache_seed=9, redis_url=redis_url)
    with cache:
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
