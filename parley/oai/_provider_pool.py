"""A native client's SDK client for the running event loop.

An async SDK client holds a connection pool bound to the loop it first ran on, and parley runs
requests on several loops (its runner loop for blocking calls, the caller's for ``a_create``):
each loop gets its own SDK client, closed when that loop shuts down, as the openai clients are
(:func:`parley._runtime.loop_resource`). Clients of equal settings share one per loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import Any, TypeVar

from .._runtime import loop_resource
from ._provider_base import ProviderClient

__all__ = ["PooledClient", "loop_client", "settings_key"]

R = TypeVar("R")


def settings_key(provider: str, config: Mapping[str, Any]) -> Hashable:
    """A key that is equal for equal client settings. Values are compared by ``repr`` (a
    credentials object by identity): the key is only ever held in memory, never shown."""
    return (provider, tuple(sorted((k, repr(v)) for k, v in config.items())))


def loop_client(key: Hashable, make: Callable[[], R], close: Callable[[R], Awaitable[object]]) -> R:
    """The running loop's SDK client for ``key``, made by ``make()`` on first use there."""
    return loop_resource(("parley.oai.provider", key), make, close)


class PooledClient(ProviderClient):
    """A native client over an async SDK client: subclasses build one in :meth:`_new_sdk`
    and close it in :meth:`_close_sdk`; :meth:`_sdk` is the running loop's."""

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self._key = settings_key(self.PROVIDER, config)

    def _sdk(self) -> Any:
        return loop_client(self._key, self._new_sdk, self._close_sdk)

    def _new_sdk(self) -> Any:
        raise NotImplementedError

    async def _close_sdk(self, client: Any) -> None:
        raise NotImplementedError
