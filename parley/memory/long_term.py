"""``LongTermMemory``: texts remembered by meaning, recalled top-k by a query."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .._core.runtime import run_in_thread
from .base import EmbeddingFunction, MemoryHit, VectorStore

if TYPE_CHECKING:
    from .base import Vectors

__all__ = ["LongTermMemory"]


class LongTermMemory:
    """An embedding function over a vector store.

    ``embedding_function`` defaults to parley's bundled model (the ``memory`` extra:
    :class:`~parley.memory.embedding.WordLlamaEmbedding`), ``store`` to a new
    :class:`~parley.memory.stores.InMemoryVectorStore`; pass a
    :class:`~parley.memory.stores.SQLiteVectorStore` to keep memories across runs, or any
    object with the :class:`~parley.memory.base.VectorStore` methods (Redis, a vector DB).

    The ``a_`` methods run the same work in a worker thread, so that embedding and store I/O
    never block an event loop.
    """

    def __init__(
        self,
        embedding_function: EmbeddingFunction | None = None,
        store: VectorStore | None = None,
    ) -> None:
        if embedding_function is None:
            from .embedding import default_embedding_function

            embedding_function = cast("EmbeddingFunction", default_embedding_function())
        elif not callable(embedding_function):
            raise TypeError(
                "embedding_function must be callable: fn(texts: list[str]) -> list of vectors"
            )
        if store is None:
            from .stores import InMemoryVectorStore

            store = InMemoryVectorStore()
        self.embedding_function: EmbeddingFunction = embedding_function
        self.store = store

    def __len__(self) -> int:
        return len(self.store)

    def _embed(self, texts: Sequence[str]) -> Vectors:
        vectors = self.embedding_function(list(texts))
        if len(vectors) != len(texts):
            raise ValueError(
                f"the embedding function returned {len(vectors)} vectors for {len(texts)} texts"
            )
        return vectors

    def add(self, text: str, metadata: Mapping[str, Any] | None = None) -> str:
        """Remember ``text``; returns its id."""
        return self.add_many([text], [metadata or {}])[0]

    def add_many(
        self, texts: Sequence[str], metadatas: Sequence[Mapping[str, Any]] | None = None
    ) -> list[str]:
        """Remember several texts at once (one embedding call); returns their ids."""
        if isinstance(texts, str):
            raise TypeError("add_many takes a list of texts; use add() for one")
        ids = [uuid.uuid4().hex for _ in texts]
        if ids:
            self.store.add(ids, self._embed(texts), list(texts), metadatas)
        return ids

    def search(self, query: str, k: int = 5) -> list[MemoryHit]:
        """The ``k`` memories nearest in meaning to ``query``, nearest first."""
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        if len(self.store) == 0:
            return []
        return self.store.query(self._embed([query])[0], k)

    def delete(self, ids: Sequence[str]) -> None:
        """Forget the memories with these ids."""
        self.store.delete(ids)

    def clear(self) -> None:
        """Forget everything."""
        self.store.clear()

    async def a_add(self, text: str, metadata: Mapping[str, Any] | None = None) -> str:
        return await run_in_thread(self.add, text, metadata)

    async def a_add_many(
        self, texts: Sequence[str], metadatas: Sequence[Mapping[str, Any]] | None = None
    ) -> list[str]:
        return await run_in_thread(self.add_many, texts, metadatas)

    async def a_search(self, query: str, k: int = 5) -> list[MemoryHit]:
        return await run_in_thread(self.search, query, k)
