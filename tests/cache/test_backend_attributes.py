"""The cache backends' AutoGen attributes (documented in parley/cache/'s backend modules).

Code written for AutoGen reads these directly (``DiskCache.cache.clear()``, an in-memory
cache's ``_cache`` to see what was stored), so the attribute names are the compatibility
surface. The disk and Redis values stay parley's JSON text (README: caches never pickle); the
in-memory cache keeps the objects themselves, as AutoGen.
"""

from __future__ import annotations

import os
from pathlib import Path

import diskcache
import pytest
import redis

from parley.cache import Cache
from parley.cache.disk_cache import DiskCache
from parley.cache.in_memory_cache import InMemoryCache
from parley.cache.redis_cache import RedisCache


@pytest.fixture
def in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


# -- DiskCache ----------------------------------------------------------------------------------


def test_disk_cache_attribute_is_a_diskcache_in_the_seed_directory(in_tmp_dir: Path) -> None:
    dc = DiskCache(42)  # the seed is the directory path, as in AutoGen
    assert isinstance(dc.cache, diskcache.Cache)
    assert dc.cache.directory.endswith("42")
    assert os.path.realpath(dc.cache.directory) == str((in_tmp_dir / "42").resolve())
    dc.set("k", {"v": 1})
    assert "k" in dc.cache
    dc.close()


def test_disk_cache_is_usable_after_close(tmp_path: Path) -> None:
    dc = DiskCache(tmp_path / "seed")
    dc.set("k", "v")
    dc.close()
    assert dc.get("k") == "v"
    dc.close()
    dc.set("k2", "v2")
    assert dc.get("k2") == "v2"
    dc.close()
    assert len(dc.cache) == 2  # the diskcache itself reopens too
    dc.cache.clear()
    assert dc.get("k") is None
    dc.close()


def test_disk_cache_attribute_keeps_the_safety_rules(tmp_path: Path) -> None:
    dc = DiskCache(tmp_path / "seed")
    with pytest.raises(TypeError, match="stores text"):
        dc.cache.set("k", {"not": "text"})
    dc.close()


def test_cache_disk_enter_returns_the_disk_cache(in_tmp_dir: Path) -> None:
    cache = Cache.disk(cache_seed=7)
    assert isinstance(cache.cache, DiskCache)
    assert cache.config == {"cache_seed": "7", "cache_path_root": ".cache"}
    with cache as entered:
        assert entered is cache.cache
        assert isinstance(entered.cache, diskcache.Cache)
        assert entered.cache.directory.endswith(os.path.join(".cache", "7"))
        entered.set("k", "v")
    assert cache.get("k") == "v"  # closed on exit, reopened on use
    cache.close()


# -- InMemoryCache ------------------------------------------------------------------------------


def test_in_memory_cache_prefixes_keys_with_the_seed() -> None:
    cache = InMemoryCache(42)
    assert cache._seed == "42"
    assert cache._prefixed_key("k") == "42_k"
    cache.set("k", "v")
    assert type(cache._cache) is dict
    assert list(cache._cache) == ["42_k"]


def test_in_memory_cache_without_a_seed_does_not_prefix() -> None:
    cache = InMemoryCache()
    assert cache._seed == ""
    assert cache._prefixed_key("k") == "k"
    cache.set("k", 1)
    assert list(cache._cache) == ["k"]


def test_in_memory_cache_none_means_missing_but_zero_is_a_value() -> None:
    cache = InMemoryCache("s")
    cache.set("none", None)
    cache.set("zero", 0)
    assert cache.get("none", "default") == "default"
    assert cache.get("zero", "default") == 0
    assert cache.get("missing", "default") == "default"


def test_in_memory_cache_keeps_its_entries_after_with_and_close() -> None:
    cache = InMemoryCache(1)
    with cache as entered:
        assert entered is cache
        cache.set("k", "v")
    cache.close()
    assert cache.get("k") == "v"
    with Cache.in_memory(cache_seed=3) as backend:
        assert isinstance(backend, InMemoryCache)
        assert backend._seed == "3"


# -- RedisCache ---------------------------------------------------------------------------------


@pytest.mark.redis
def test_redis_cache_attributes(redis_url: str) -> None:
    rc = RedisCache(7, redis_url)
    assert rc.seed == "7"
    assert isinstance(rc.cache, redis.Redis)
    assert rc._prefixed_key("k") == "autogen:7:k"
    rc.set("k", {"v": 1})
    assert rc.cache.exists("autogen:7:k") == 1
    assert rc.get("k") == {"v": 1}
    assert rc.get("missing", "default") == "default"
    rc.close()
    assert rc.get("k") == {"v": 1}  # reconnects after close
    rc.close()


@pytest.mark.redis
def test_cache_redis_enter_returns_the_redis_cache(redis_url: str) -> None:
    cache = Cache.redis(cache_seed=9, redis_url=redis_url)
    assert cache.config == {"cache_seed": "9", "redis_url": redis_url}
    with cache as entered:
        assert entered is cache.cache
        assert isinstance(entered, RedisCache)
        assert isinstance(entered.cache, redis.Redis)
        entered.set("k", "v")
    assert cache.get("k") == "v"
    cache.close()


# -- The names AutoGen's modules import, which code patches --------------------------------------


def test_disk_cache_module_exposes_diskcache_and_a_patched_class_is_used(
    in_tmp_dir: Path,
) -> None:
    from unittest import mock

    from parley.cache import disk_cache

    assert disk_cache.diskcache is diskcache
    with mock.patch("parley.cache.disk_cache.diskcache.Cache") as stand_in:
        stand_in.return_value.get.return_value = '"stored"'
        with DiskCache("seed_dir") as cache:
            # Called as AutoGen calls it: the directory, nothing else.
            stand_in.assert_called_once_with("seed_dir")
            assert cache.cache is stand_in.return_value
            cache.set("k", "v")
            cache.cache.set.assert_called_once_with("k", '"v"')  # JSON text, on purpose
            assert cache.get("k") == "stored"
        stand_in.return_value.close.assert_called()
    assert not (in_tmp_dir / "seed_dir").exists()  # the stand-in made nothing on disk
    # Unpatched, parley's safe subclass again.
    real = DiskCache("real_dir")
    assert isinstance(real.cache, diskcache.Cache)
    real.close()


def test_redis_cache_module_exposes_redis_and_a_patched_from_url_is_used() -> None:
    from unittest import mock

    from parley.cache import redis_cache

    assert redis_cache.redis is redis
    url = "redis://localhost:6379/0"
    with mock.patch("parley.cache.redis_cache.redis.Redis.from_url") as from_url:
        client = from_url.return_value
        client.get.return_value = b'{"a": 1}'
        with RedisCache("s", url) as cache:
            assert cache.seed == "s"
            assert from_url.call_args.args == (url,)
            assert cache.cache is client
            assert cache.get("k") == {"a": 1}
            client.get.assert_called_with("autogen:s:k")
            client.get.return_value = None
            assert cache.get("k", "default") == "default"
        client.close.assert_called()


def test_cache_enters_and_exits_through_its_backend(in_tmp_dir: Path) -> None:
    from unittest import mock

    backend = mock.MagicMock()
    with mock.patch("parley.cache.cache_factory.CacheFactory.cache_factory", return_value=backend):
        with Cache({"cache_seed": "x", "redis_url": "redis://test"}) as entered:
            assert entered is backend.__enter__.return_value
        backend.__enter__.assert_called_once_with()
        backend.__exit__.assert_called_once_with(None, None, None)
