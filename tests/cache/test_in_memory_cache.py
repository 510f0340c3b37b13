from __future__ import annotations

import pytest

from parley.cache import AbstractCache, InMemoryCache


def test_get_returns_the_object_that_was_set() -> None:
    cache = InMemoryCache()
    value = {"answer": [1, 2], "pair": (3, 4)}
    cache.set("k", value)
    assert cache.get("k") is value  # kept as it is, as in AutoGen: a tuple stays a tuple
    assert cache.get("k")["pair"] == (3, 4)


@pytest.mark.parametrize("value", [b"bytes", {1, 2}, ("a", 1), object()])
def test_any_python_object_can_be_stored(value: object) -> None:
    cache = InMemoryCache("s")
    cache.set("k", value)
    assert cache.get("k") is value
    assert cache._cache == {"s_k": value}


def test_entries_are_the_values_themselves_under_prefixed_keys() -> None:
    seeded, unseeded = InMemoryCache(seed="test"), InMemoryCache()
    seeded.set("key", "value")
    unseeded.set("key", "value")
    assert seeded._cache["test_key"] == "value"
    assert unseeded._cache["key"] == "value"
    with InMemoryCache() as entered:
        entered.set("key", "value")
        assert entered.get("key") == "value"


def test_missing_key_returns_default() -> None:
    cache = InMemoryCache(seed=3)
    assert cache.get("missing") is None
    assert cache.get("missing", "fallback") == "fallback"


def test_stored_none_reads_as_default() -> None:
    cache = InMemoryCache()
    cache.set("k", None)
    assert cache.get("k", "fallback") == "fallback"


def test_falsy_values_other_than_none_are_returned() -> None:
    cache = InMemoryCache()
    for key, value in {"zero": 0, "empty": "", "false": False, "list": []}.items():
        cache.set(key, value)
        assert cache.get(key, "fallback") == value


def test_seed_is_a_string() -> None:
    assert InMemoryCache(7).seed == "7"
    assert InMemoryCache().seed == ""


def test_context_manager_returns_itself_and_close_keeps_entries() -> None:
    cache = InMemoryCache("s")
    with cache as entered:
        assert entered is cache
        entered.set("k", "v")
    cache.close()
    cache.close()
    assert cache.get("k") == "v"


def test_is_an_abstract_cache() -> None:
    assert isinstance(InMemoryCache(), AbstractCache)
