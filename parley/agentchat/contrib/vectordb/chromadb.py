"""``ChromaVectorDB``: RetrieveChat's default store, an embedded ChromaDB (persistent or in memory).

Needs ``pip install 'parley[retrieve]'``. Chroma's anonymous telemetry is turned off for the
clients parley creates, so nothing leaves the machine. The default embedding function is
parley's bundled WordLlama model, not Chroma's (which downloads a model on first use).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ...._retrieve_embed import (
    EmbedFunction,
    as_chroma_embedding,
    default_embedding,
    import_chromadb,
    offline_settings,
)
from ._doc_store import DocStore, Lookup, write_in_batches
from .base import Document, ItemID, QueryResults
from .utils import chroma_results_to_query_results

__all__ = ["CHROMADB_MAX_BATCH_SIZE", "ChromaVectorDB"]

CHROMADB_MAX_BATCH_SIZE = int(os.environ.get("CHROMADB_MAX_BATCH_SIZE", 40000))
_DEFAULT_METADATA = {"hnsw:space": "ip", "hnsw:construction_ef": 30, "hnsw:M": 32}


class ChromaVectorDB(DocStore):
    """A :class:`~parley.agentchat.contrib.vectordb.base.VectorDB` over ChromaDB.

    Args:
        client: a Chroma client to use; else a ``PersistentClient`` at ``path``, or an
            in-memory client when ``path`` is None.
        path: the database directory of the client parley creates.
        embedding_function: texts -> vectors; default parley's WordLlama model.
        metadata: the new collections' metadata (default: inner-product HNSW, as AutoGen).
        kwargs: more settings for the client parley creates (``chromadb.config.Settings``).
    """

    def __init__(
        self,
        *,
        client: Any = None,
        path: str | None = "tmp/db",
        embedding_function: EmbedFunction | None = None,
        metadata: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        chromadb = import_chromadb()
        self.path = path
        if client is not None:
            self.client = client
        elif path is None:
            self.client = chromadb.EphemeralClient(settings=offline_settings(chromadb, **kwargs))
        else:
            self.client = chromadb.PersistentClient(
                path=path, settings=offline_settings(chromadb, **kwargs)
            )
        self._embed: EmbedFunction = (
            embedding_function if embedding_function is not None else default_embedding()
        )
        self.embedding_function: EmbedFunction | None = self._embed
        self._chroma_embedding = as_chroma_embedding(self._embed)
        self.metadata = dict(metadata) if metadata is not None else dict(_DEFAULT_METADATA)
        self.type = "chroma"
        self.active_collection: Any = None

    def create_collection(
        self, collection_name: str, overwrite: bool = False, get_or_create: bool = True
    ) -> Any:
        try:
            existing = self.get_collection(collection_name)
        except ValueError:
            existing = None
        if existing is not None and not overwrite:
            if get_or_create:
                return existing
            raise ValueError(f"Collection {collection_name} already exists.")
        if existing is not None:
            self.delete_collection(collection_name)
        self.active_collection = self.client.create_collection(
            collection_name, embedding_function=self._chroma_embedding, metadata=self.metadata
        )
        return self.active_collection

    def get_collection(self, collection_name: str | None = None) -> Any:
        if collection_name is None:
            if self.active_collection is None:
                raise ValueError("No collection is specified.")
            return self.active_collection
        if self.active_collection is not None and self.active_collection.name == collection_name:
            return self.active_collection
        try:
            collection = self.client.get_collection(
                collection_name, embedding_function=self._chroma_embedding
            )
        except Exception as e:  # Chroma's NotFoundError, or ValueError in older versions
            raise ValueError(f"Collection {collection_name} does not exist.") from e
        self.active_collection = collection
        return collection

    def delete_collection(self, collection_name: str) -> None:
        self.client.delete_collection(collection_name)
        if self.active_collection is not None and self.active_collection.name == collection_name:
            self.active_collection = None

    def _insert(self, docs: list[Document], collection_name: str | None, upsert: bool) -> None:
        write_in_batches(
            self.get_collection(collection_name), docs, upsert, CHROMADB_MAX_BATCH_SIZE, _columns
        )

    def update_docs(
        self, docs: list[Document], collection_name: str | None = None, **kwargs: Any
    ) -> None:
        if docs:
            self.get_collection(collection_name).update(**_columns(docs))

    def delete_docs(
        self, ids: list[ItemID], collection_name: str | None = None, **kwargs: Any
    ) -> None:
        self.get_collection(collection_name).delete(ids=[str(i) for i in ids], **kwargs)

    def _nearest(
        self, queries: list[str], collection_name: str | None, n: int, options: dict[str, Any]
    ) -> QueryResults:
        collection = self.get_collection(collection_name)
        found = collection.query(query_texts=list(queries), n_results=n, **options)
        columns = {k: v for k, v in found.items() if k not in ("included", "data", "uris")}
        columns["contents"] = columns.pop("documents", None)
        return chroma_results_to_query_results(columns)

    def _get(self, lookup: Lookup) -> list[Document]:
        ids, include = lookup.ids, lookup.include
        collection = self.get_collection(lookup.collection_name)
        include = list(include) if include is not None else ["metadatas", "documents"]
        found = collection.get(
            ids=[str(i) for i in ids] if ids is not None else None,
            include=include,
            **lookup.options,
        )
        docs: list[Document] = []
        for i, item_id in enumerate(found["ids"]):
            doc = Document(id=item_id)
            for column, field in (
                ("documents", "content"),
                ("metadatas", "metadata"),
                ("embeddings", "embedding"),
            ):
                values = found.get(column)
                if values is not None and column in include:
                    doc[field] = values[i]  # type: ignore[literal-required]
            docs.append(doc)
        return docs


def _columns(docs: Sequence[Document]) -> dict[str, Any]:
    columns: dict[str, Any] = {
        "ids": [str(d["id"]) for d in docs],
        "documents": [d.get("content") for d in docs],
    }
    metadatas = [d.get("metadata") for d in docs]
    if any(metadatas):
        # Chroma rejects empty metadata dicts; a document without any gets None.
        columns["metadatas"] = [dict(m) if m else None for m in metadatas]
    embeddings = [d.get("embedding") for d in docs]
    if all(e is not None for e in embeddings):
        columns["embeddings"] = [list(e) for e in embeddings if e is not None]
    return columns
