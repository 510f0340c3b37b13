"""Sending a durable-chat store to other processes (Ray workers): as the recipe that makes it,
since a store holds an open connection (SQLite's, a Redis client) that does not pickle."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any

__all__ = ["StoreRecipe", "portable"]


@dataclass(frozen=True)
class StoreRecipe:
    """``cls(*args, **kwargs)``: a store made again where it is needed."""

    cls: type
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict, repr=False)  # holds the journal key

    def make(self) -> Any:
        return self.cls(*self.args, **self.kwargs)


def portable(store: Any) -> Any:
    """What to send for ``store``: a :class:`StoreRecipe` for parley's stores (the SQLite
    file must be on a path every worker sees: one machine, or a shared disk; Redis, any
    cluster), the store itself for a store of one's own that pickles; a TypeError otherwise."""
    if store is None:
        return None
    from ..durable import RedisChatStore, SqliteChatStore

    # Exact classes: a subclass may hold more than its constructor's arguments. The journal
    # key travels with the recipe (in Ray's object store, so keep Ray's token authentication
    # on): every worker must sign and check with the key the driver's store has.
    if type(store) is SqliteChatStore:
        kwargs = {"synchronous": store.synchronous, **_common(store)}
        return StoreRecipe(SqliteChatStore, (store.path,), kwargs)
    if type(store) is RedisChatStore:
        kwargs = {"prefix": store.prefix, **_common(store)}
        return StoreRecipe(RedisChatStore, (store.url,), kwargs)
    try:
        pickle.dumps(store)
    except Exception as e:
        raise TypeError(
            f"the batch's store ({type(store).__name__}) cannot be sent to Ray workers: it "
            f"does not pickle ({e}). Use a SqliteChatStore on a path every worker sees, a "
            "RedisChatStore, or give your store a __reduce__ that rebuilds it"
        ) from e
    return store


def _common(store: Any) -> dict[str, Any]:
    return {"key": store.key, "lease_seconds": store.lease_seconds}


def rebuilt(sent: Any) -> Any:
    """The store in the worker: made from its recipe, or as it was sent."""
    return sent.make() if isinstance(sent, StoreRecipe) else sent
