from __future__ import annotations

import pytest

from parley.cache import AbstractCache, InMemoryCache


def test_values_are_stored_as_json_copies() -> None:
    cache = InMemoryCache()
    value = {"answer": [1, 2], "pair": (3, 4)}
    cache.set("k", value)
    value["answer"].append(99)  # changing the value after set does not change the cache
    first = cache.get("k")
    assert first == {"answer": [1, 2], "pair": [3, 4]}
    first["answer"].clear()  # nor does changing what get returned
    assert cache.get("k") == {"answer": [1, 2], "pair": [3, 4]}


@pytest.mark.parametrize("value", [b"bytes", {1, 2}, object(), {"nested": {("a",): 1}}])
def test_a_value_that_is_not_json_is_a_type_error(value: object) -> None:
    cache = InMemoryCache()
    with pytest.raises(TypeError, match="InMemoryCache stores JSON values"):
        cache.set("k", value)
    assert cache.get("k") is None


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


@pytest.mark.parametrize("planted", ["not json {", b"\x80\x81", {"an": "object"}])
def test_an_entry_parley_did_not_write_is_a_miss_with_a_warning(
    planted: object, caplog: pytest.LogCaptureFixture
) -> None:
    cache = InMemoryCache(seed=7)
    cache._cache[cache._prefixed_key("k")] = planted  # type: ignore[assignment]
    assert cache.get("k", "default") == "default"
    assert "ignoring the entry for key 'k'" in caplog.text
