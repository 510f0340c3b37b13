from __future__ import annotations

from types import TracebackType
from typing import Any

from parley.cache import AbstractCache, Cache


class DictCache:
    """A user's own cache: no base class, just the five members."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.closed = 0

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def set(self, key: str, value: Any) -> None:
        self.data[key] = value

    def close(self) -> None:
        self.closed += 1

    def __enter__(self) -> DictCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class NoClose:
    def get(self, key: str, default: Any = None) -> Any:
        return default

    def set(self, key: str, value: Any) -> None:
        pass


def use(cache: AbstractCache) -> Any:
    with cache as c:
        c.set("k", 1)
        return c.get("k")


def test_any_object_with_the_members_is_a_cache() -> None:
    cache = DictCache()
    assert isinstance(cache, AbstractCache)
    assert use(cache) == 1
    assert cache.closed == 1


def test_an_object_missing_members_is_not_a_cache() -> None:
    assert not isinstance(NoClose(), AbstractCache)
    assert not isinstance({}, AbstractCache)


def test_the_cache_wrapper_is_itself_a_cache() -> None:
    assert isinstance(Cache.in_memory(), AbstractCache)
