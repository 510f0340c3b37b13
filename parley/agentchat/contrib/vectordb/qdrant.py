"""``QdrantVectorDB``: RetrieveChat over Qdrant, in process (``path=`` or ``":memory:"``) or a server.

Needs ``pip install 'parley[retrieve-qdrant]'`` (qdrant-client). Vectors are compared by cosine;
the distance of a hit is ``1 - cosine similarity``, so that a ``distance_threshold`` means the
same as with Chroma's inner-product space over unit vectors. Qdrant takes only UUIDs and
unsigned integers as point ids: other ids are mapped to a UUID and kept in the payload, so the
caller gets its own ids back. ``retrieve_docs(..., search_string="word")`` keeps only documents
whose text contains ``word`` (Qdrant's full-text match).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from typing import Any

from ...._retrieve_embed import EmbedFunction, default_embedding, embed, install_hint
from ._doc_store import DocStore, Lookup
from .base import HASH_LENGTH, Document, ItemID, QueryResults

__all__ = ["QdrantVectorDB"]

_ID_KEY = "_id"


def _import_qdrant() -> tuple[Any, Any]:
    try:
        from qdrant_client import QdrantClient, models
    except ImportError as e:
        raise ImportError(install_hint("retrieve-qdrant", "qdrant-client")) from e
    return QdrantClient, models


def _uuid_of(text: str) -> str:
    return str(uuid.UUID(hex=hashlib.md5(text.encode("utf-8")).hexdigest()))


def _point_id(item_id: ItemID) -> str | int:
    if isinstance(item_id, int) and item_id >= 0:
        return item_id
    try:
        return str(uuid.UUID(str(item_id)))
    except ValueError:
        return _uuid_of(str(item_id))


class QdrantVectorDB(DocStore):
    """A :class:`~parley.agentchat.contrib.vectordb.base.VectorDB` over Qdrant.

    Args:
        client: a ``QdrantClient``; else one built from ``kwargs`` (``path="..."`` for a
            local on-disk database, ``url=...`` for a server), in memory when there are none.
        embedding_function: texts -> vectors; default parley's WordLlama model.
        content_payload_key, metadata_payload_key: where a point's text and metadata are kept.
        collection_options: more arguments for ``client.create_collection``.
    """

    def __init__(
        self,
        *,
        client: Any = None,
        embedding_function: EmbedFunction | None = None,
        content_payload_key: str = "_content",
        metadata_payload_key: str = "_metadata",
        collection_options: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        client_class, self._models = _import_qdrant()
        if client is None:
            client = client_class(**kwargs) if kwargs else client_class(":memory:")
        self.client = client
        self._embed: EmbedFunction = (
            embedding_function if embedding_function is not None else default_embedding()
        )
        self.embedding_function: EmbedFunction | None = self._embed
        self.content_payload_key = content_payload_key
        self.metadata_payload_key = metadata_payload_key
        self.collection_options = dict(collection_options or {})
        self.type = "qdrant"
        self.active_collection: Any = None
        self._active_name: str | None = None

    def create_collection(
        self, collection_name: str, overwrite: bool = False, get_or_create: bool = True
    ) -> Any:
        exists = self.client.collection_exists(collection_name)
        if exists and not overwrite:
            if get_or_create:
                return self.get_collection(collection_name)
            raise ValueError(f"Collection {collection_name} already exists.")
        if exists:
            self.delete_collection(collection_name)
        size = len(embed(self._embed, ["dimension probe"])[0])
        self.client.create_collection(
            collection_name,
            vectors_config=self._models.VectorParams(
                size=size, distance=self._models.Distance.COSINE
            ),
            **self.collection_options,
        )
        return self.get_collection(collection_name)

    def get_collection(self, collection_name: str | None = None) -> Any:
        if collection_name is None:
            if self._active_name is None:
                raise ValueError("No collection is specified.")
            collection_name = self._active_name
        if not self.client.collection_exists(collection_name):
            raise ValueError(f"Collection {collection_name} does not exist.")
        self._active_name = collection_name
        self.active_collection = self.client.get_collection(collection_name)
        return self.active_collection

    def _name(self, collection_name: str | None) -> str:
        self.get_collection(collection_name)
        assert self._active_name is not None
        return self._active_name

    def delete_collection(self, collection_name: str) -> None:
        self.client.delete_collection(collection_name)
        if self._active_name == collection_name:
            self._active_name = self.active_collection = None

    def generate_chunk_ids(self, chunks: list[str], hash_length: int = HASH_LENGTH) -> list[ItemID]:
        """UUIDs made from each chunk's MD5 (Qdrant's ids are UUIDs or integers)."""
        return [_uuid_of(chunk) for chunk in chunks]

    def _insert(self, docs: list[Document], collection_name: str | None, upsert: bool) -> None:
        name = self._name(collection_name)
        if not upsert:
            existing = self.client.retrieve(name, ids=[_point_id(d["id"]) for d in docs])  # type: ignore[arg-type]
            if existing:
                raise ValueError(
                    f"Documents with these ids already exist: {[p.id for p in existing]}; "
                    f"use upsert=True to replace them"
                )
        self._write(name, docs)

    def update_docs(
        self, docs: list[Document], collection_name: str | None = None, **kwargs: Any
    ) -> None:
        if docs:
            self._write(self._name(collection_name), docs)

    def _write(self, name: str, docs: list[Document]) -> None:
        missing = [d["content"] for d in docs if d.get("embedding") is None]
        computed = iter(embed(self._embed, missing) if missing else [])
        points = []
        for doc in docs:
            given = doc.get("embedding")
            vector = [float(x) for x in given] if given is not None else next(computed)
            payload = {
                self.content_payload_key: doc["content"],
                self.metadata_payload_key: dict(doc.get("metadata") or {}),
                _ID_KEY: doc["id"],
            }
            points.append(
                self._models.PointStruct(id=_point_id(doc["id"]), vector=vector, payload=payload)  # type: ignore[arg-type]
            )
        self.client.upsert(name, points=points)

    def delete_docs(
        self, ids: list[ItemID], collection_name: str | None = None, **kwargs: Any
    ) -> None:
        self.client.delete(
            self._name(collection_name),
            points_selector=self._models.PointIdsList(points=[_point_id(i) for i in ids]),
        )

    def _nearest(
        self, queries: list[str], collection_name: str | None, n: int, options: dict[str, Any]
    ) -> QueryResults:
        name = self._name(collection_name)
        # search_string: only documents whose text contains it (AutoGen's query_qdrant filter).
        search = options.get("search_string")
        condition = (
            self._models.Filter(
                must=[
                    self._models.FieldCondition(
                        key=self.content_payload_key,
                        match=self._models.MatchText(text=search),
                    )
                ]
            )
            if search
            else None
        )
        results: QueryResults = []
        for vector in embed(self._embed, queries) if queries else []:
            found = self.client.query_points(
                name, query=vector, limit=n, with_payload=True, query_filter=condition
            )
            results.append([(self._document(p), 1.0 - float(p.score)) for p in found.points])
        return results

    def _get(self, lookup: Lookup) -> list[Document]:
        ids, include = lookup.ids, lookup.include
        name = self._name(lookup.collection_name)
        with_vectors = include is not None and any(i.startswith("embedding") for i in include)
        if ids is not None:
            points = self.client.retrieve(
                name,
                ids=[_point_id(i) for i in ids],
                with_payload=True,
                with_vectors=with_vectors,
            )
        else:
            points, offset = [], None
            while True:
                page, offset = self.client.scroll(
                    name, limit=1000, offset=offset, with_payload=True, with_vectors=with_vectors
                )
                points.extend(page)
                if offset is None:
                    break
        return [self._document(p, with_vectors) for p in points]

    def _document(self, point: Any, with_vector: bool = False) -> Document:
        payload = point.payload or {}
        doc = Document(
            id=payload.get(_ID_KEY, point.id),
            content=payload.get(self.content_payload_key, ""),
            metadata=payload.get(self.metadata_payload_key) or {},
        )
        if with_vector and point.vector is not None:
            doc["embedding"] = list(point.vector)
        return doc
