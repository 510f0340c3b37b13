"""What parley's two VectorDBs (Chroma, Qdrant) do alike around their documents: the checks
of ``insert_docs``, the distance filter of ``retrieve_docs`` and AutoGen's signatures of these
and ``get_docs_by_ids``, written once here; each store supplies the calls to its database
(:meth:`DocStore._insert`, :meth:`DocStore._nearest`, :meth:`DocStore._get`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .base import HASH_LENGTH, Document, ItemID, QueryResults, chunk_ids
from .utils import filter_results_by_distance

__all__ = ["DocStore", "Lookup", "write_in_batches"]


def write_in_batches(
    collection: Any,
    docs: Sequence[Document],
    upsert: bool,
    batch_size: int,
    columns: Callable[[Sequence[Document]], dict[str, Any]],
) -> None:
    """``collection.upsert`` (or ``.add``) of ``columns(batch)`` for each batch of ``docs``: the
    Chroma-style collection API that the Chroma and PGVector stores share."""
    write = collection.upsert if upsert else collection.add
    for start in range(0, len(docs), batch_size):
        write(**columns(docs[start : start + batch_size]))


@dataclass(frozen=True)
class Lookup:
    """A ``get_docs_by_ids`` call: the ids (every document when None), the collection (the
    active one when None), the fields to include (the store's default when None) and the
    caller's other keyword arguments."""

    ids: list[ItemID] | None
    collection_name: str | None
    include: list[str] | None
    options: dict[str, Any] = field(default_factory=dict)


class DocStore:
    """Base of parley's VectorDBs (see the module docstring)."""

    def generate_chunk_ids(self, chunks: list[str], hash_length: int = HASH_LENGTH) -> list[ItemID]:
        """AutoGen's chunk ids: a prefix of each chunk's BLAKE2b."""
        return list(chunk_ids(chunks, hash_length))

    def insert_docs(
        self,
        docs: list[Document],
        collection_name: str | None = None,
        upsert: bool = False,
        **kwargs: Any,
    ) -> None:
        if not docs:
            return
        for doc in docs:
            if doc.get("content") is None:
                raise ValueError("The document content is required.")
            if doc.get("id") is None:
                raise ValueError("The document id is required.")
        self._insert(docs, collection_name, upsert)

    def retrieve_docs(
        self,
        queries: list[str],
        collection_name: str | None = None,
        n_results: int = 10,
        distance_threshold: float = -1,
        **kwargs: Any,
    ) -> QueryResults:
        found = self._nearest(queries, collection_name, n_results, kwargs)
        return filter_results_by_distance(found, distance_threshold)

    def get_docs_by_ids(
        self,
        ids: list[ItemID] | None = None,
        collection_name: str | None = None,
        include: list[str] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        return self._get(Lookup(ids, collection_name, include, kwargs))

    def _get(self, lookup: Lookup) -> list[Document]:
        raise NotImplementedError

    def _insert(self, docs: list[Document], collection_name: str | None, upsert: bool) -> None:
        """Add checked ``docs`` (replacing those with the same ids only with ``upsert``)."""
        raise NotImplementedError

    def _nearest(
        self, queries: list[str], collection_name: str | None, n: int, options: dict[str, Any]
    ) -> QueryResults:
        """The ``n`` nearest documents of each query with their distances, nearest first;
        ``options`` are the caller's extra keyword arguments."""
        raise NotImplementedError
