from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from parley.cache import AbstractCache, Cache, CacheFactory, DiskCache, InMemoryCache


@pytest.fixture(autouse=True)
def in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Disk caches default to ./.cache, so every test runs in its own directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_disk_factory_defaults_to_seed_42_under_dot_cache(in_tmp_dir: Path) -> None:
    cache = Cache.disk()
    with cache:
        cache.set("k", "v")
        assert cache.config == {"cache_seed": "42", "cache_path_root": ".cache"}
        assert isinstance(cache.cache, DiskCache)
    assert (in_tmp_dir / ".cache" / "42").is_dir()


def test_seed_is_stored_as_a_string_and_names_the_directory(in_tmp_dir: Path) -> None:
    cache = Cache.disk(cache_seed=7, cache_path_root="root")
    with cache:
        assert cache.config["cache_seed"] == "7"
        cache.set("k", "v")
    assert (in_tmp_dir / "root" / "7").is_dir()


def test_absolute_root(tmp_path: Path) -> None:
    root = tmp_path / "elsewhere"
    with Cache.disk(cache_seed="s", cache_path_root=root) as cache:
        cache.set("k", "v")
    assert (root / "s").is_dir()


def test_with_binds_the_backend_as_in_autogen_and_closes_it() -> None:
    cache = Cache.disk(cache_seed=1)
    with cache as entered:
        assert entered is cache.cache
        assert isinstance(entered, DiskCache)
        assert cache.config["cache_seed"] == "1"
        entered.set("k", "v")
        assert entered.get("k") == "v"
    # closed on exit, and it reopens on next use, as the completion client expects
    assert cache.get("k") == "v"
    with cache:
        assert cache.get("k") == "v"


def test_close_is_idempotent_and_reopens() -> None:
    cache = Cache.disk()
    cache.set("k", "v")
    cache.close()
    cache.close()
    assert cache.get("k") == "v"
    cache.close()


def test_seeds_isolate_entries() -> None:
    with Cache.disk(cache_seed=1) as one, Cache.disk(cache_seed=2) as two:
        one.set("k", "one")
        assert two.get("k") is None
        two.set("k", "two")
        assert one.get("k") == "one"
        assert two.get("k") == "two"


def test_entries_persist_across_instances() -> None:
    with Cache.disk(cache_seed=5) as cache:
        cache.set("k", {"answer": 42})
    with Cache({"cache_seed": 5, "cache_path_root": ".cache"}) as again:
        assert again.get("k") == {"answer": 42}


def test_get_returns_default_for_missing_keys() -> None:
    with Cache.disk() as cache:
        assert cache.get("missing") is None
        assert cache.get("missing", "fallback") == "fallback"


def test_config_is_copied_not_mutated() -> None:
    config: dict[str, Any] = {"cache_seed": 3, "cache_path_root": ".cache"}
    original = dict(config)
    cache = Cache(config)
    assert cache.config == {"cache_seed": "3", "cache_path_root": ".cache"}
    cache.config["cache_path_root"] = "changed"
    assert config == original


def test_default_seed_is_not_added_to_the_callers_dict() -> None:
    config: dict[str, Any] = {"cache_path_root": ".cache"}
    assert Cache(config).config["cache_seed"] == "42"
    assert config == {"cache_path_root": ".cache"}


def test_invalid_config_key_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="Invalid config key: foo"):
        Cache({"foo": 1})
    with pytest.raises(ValueError, match="Invalid config key: seed"):
        Cache({"cache_seed": 1, "seed": 2})


def test_allowed_config_keys() -> None:
    assert Cache.ALLOWED_CONFIG_KEYS == [
        "cache_seed",
        "redis_url",
        "cache_path_root",
        "cosmos_db_config",
    ]


def test_config_must_be_a_mapping() -> None:
    with pytest.raises(TypeError, match="must be a dict"):
        Cache([("cache_seed", 1)])  # type: ignore[arg-type]


@pytest.mark.parametrize("config", [{"cache_seed": 1}, {"cache_seed": 1, "cache_path_root": None}])
def test_missing_root_defaults_to_dot_cache(in_tmp_dir: Path, config: dict[str, Any]) -> None:
    with Cache(config) as cache:
        cache.set("k", "v")
    assert (in_tmp_dir / ".cache" / "1").is_dir()


def test_root_of_the_wrong_type_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="cache_path_root must be a path, got int"):
        Cache({"cache_path_root": 3})


def test_none_seed_is_rejected() -> None:
    with pytest.raises(ValueError, match="not None"):
        Cache.disk(cache_seed=None)  # type: ignore[arg-type]


def test_seed_of_the_wrong_type_is_rejected() -> None:
    with pytest.raises(TypeError, match="cache_seed must be a str or int, got list"):
        Cache({"cache_seed": [1]})


def test_a_directory_given_as_the_seed_is_the_cache_directory(tmp_path: Path) -> None:
    # AutoGen joins the seed onto the root, so an absolute path as the seed is the directory
    # itself (AutoGen's own tests call Cache.disk(tmpdir)).
    target = tmp_path / "given"
    cache = Cache.disk(str(target))
    with cache as backend:
        backend.set("k", ["v", 1])
    assert cache.get("k") == ["v", 1]
    assert cache.config["cache_seed"] == str(target)
    assert (target / "cache.db").is_file()
    assert not (tmp_path / ".cache").exists()


def test_a_relative_seed_with_separators_nests_under_the_root(in_tmp_dir: Path) -> None:
    with Cache.disk(cache_seed="team/run-1") as backend:
        backend.set("k", "v")
    assert (in_tmp_dir / ".cache" / "team" / "run-1").is_dir()


def test_a_seed_with_a_nul_byte_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="cannot name a cache directory"):
        Cache.disk(cache_seed="a\0b")


def test_an_absolute_seed_keeps_what_was_stored_there(
    in_tmp_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # As in AutoGen, whose tests make Cache.disk(temporary_directory): a second cache on the
    # same directory reads what the first stored, and nothing goes to ./.cache.
    where = tmp_path_factory.mktemp("elsewhere") / "store"
    with Cache.disk(str(where)) as cache:
        cache.set("k", ["v", 1])
    assert where.is_dir()
    assert not (in_tmp_dir / ".cache").exists()
    with Cache.disk(str(where)) as cache:
        assert cache.get("k") == ["v", 1]


def test_cosmos_db_is_not_supported() -> None:
    with pytest.raises(NotImplementedError, match="Cosmos DB"):
        Cache.cosmos_db(connection_string="AccountEndpoint=x", container_id="c")
    with pytest.raises(NotImplementedError, match="Cosmos DB"):
        Cache({"cosmos_db_config": {"connection_string": "x"}})


def test_in_memory_factory() -> None:
    cache = Cache.in_memory(cache_seed=3)
    with cache:
        assert cache.config == {"cache_seed": "3"}
        assert isinstance(cache.cache, InMemoryCache)
        value = ("kept", "as", "it", "is")
        cache.set("k", value)
        assert cache.get("k") is value
    assert Cache.in_memory().config == {"cache_seed": "42"}


def test_in_memory_caches_do_not_share_entries() -> None:
    one, two = Cache.in_memory(), Cache.in_memory()
    one.set("k", "v")
    assert two.get("k") is None


def test_in_memory_writes_nothing_to_disk(in_tmp_dir: Path) -> None:
    with Cache.in_memory() as cache:
        cache.set("k", "v")
    assert os.listdir(in_tmp_dir) == []


def test_cache_is_an_abstract_cache() -> None:
    cache = Cache.disk()
    with cache:
        assert isinstance(cache, AbstractCache)
        assert repr(cache).startswith("Cache(DiskCache(")


def test_cache_factory_defaults_to_disk(in_tmp_dir: Path) -> None:
    backend = CacheFactory.cache_factory("s")
    with backend:
        assert isinstance(backend, DiskCache)
        backend.set("k", "v")
    assert (in_tmp_dir / ".cache" / "s").is_dir()


def test_cache_factory_root(in_tmp_dir: Path) -> None:
    with CacheFactory.cache_factory(seed=8, cache_path_root="r") as backend:
        backend.set("k", "v")
    assert (in_tmp_dir / "r" / "8").is_dir()


def test_cache_factory_cosmos_is_not_supported() -> None:
    with pytest.raises(NotImplementedError, match="Cosmos DB"):
        CacheFactory.cache_factory(seed=1, cosmosdb_config={"connection_string": "x"})


@pytest.mark.redis
def test_cache_factory_prefers_redis(redis_url: str) -> None:
    from parley.cache import RedisCache

    with CacheFactory.cache_factory(1, redis_url=redis_url, cosmosdb_config={"x": 1}) as backend:
        assert isinstance(backend, RedisCache)
        backend.set("k", "v")
        assert backend.get("k") == "v"


def test_transform_cache_helpers_round_trip_through_a_seed_path_cache(tmp_path: Path) -> None:
    # The shape of AutoGen's transforms test: a disk cache made from a temporary directory.
    from parley.agentchat.contrib.capabilities import transforms_util

    cache = Cache.disk(str(tmp_path / "transforms"))
    content = [{"text": "Hello"}, {"text": "World"}]
    transforms_util.cache_content_set(cache, "one", content)
    assert transforms_util.cache_content_get(cache, "one") == (content,)
    transforms_util.cache_content_set(cache, "many", content, 1, "text", {"k": "v"})
    assert transforms_util.cache_content_get(cache, "many") == (content, 1, "text", {"k": "v"})
    assert transforms_util.cache_content_get(cache, "absent") is None
