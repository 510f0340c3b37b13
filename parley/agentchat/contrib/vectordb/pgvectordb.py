"""``PGVectorDB``: RetrieveChat over PostgreSQL with the pgvector extension (AutoGen's ``pgvectordb``).

Needs ``pip install 'parley[retrieve-pgvector]'`` (psycopg 3 and pgvector's Python package) and a
PostgreSQL server where the ``vector`` extension is installed. A collection is a table
(``documents text, id text primary key, metadatas jsonb, embedding vector(n)``) with AutoGen's
three HNSW indexes (L2, cosine, inner product); ``n`` is the embedding function's dimension.

As in parley's other stores the default embedding function is parley's bundled WordLlama model
(nothing is downloaded), not AutoGen's SentenceTransformer ``all-MiniLM-L6-v2``: ``model_name`` is
kept for AutoGen's signature, and another model is used by passing it as ``embedding_function``
(``SentenceTransformer(name).encode``, say). The distance of a hit is the Euclidean one by
default, as AutoGen's; ``retrieve_docs(..., distance_type="cosine")`` gives ``1 - cosine``.

Unlike AutoGen's, every table name is quoted and every value is a query parameter (no SQL is
built from a name or a value); ``Collection.get``'s ``where`` is therefore a mapping matched
against the metadata (JSONB containment), not SQL text. A missing collection is a
``ValueError`` from ``get_collection``, as with parley's other stores.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ...._retrieve_embed import EmbedFunction, default_embedding, embed
from ._doc_store import DocStore, Lookup, write_in_batches
from ._pg_sql import (
    checked_table_name,
    connect,
    create_table,
    floats,
    import_pg,
    nearest_rows,
    select_rows,
    table_exists,
    upsert_rows,
)
from .base import Document, ItemID, QueryResults

__all__ = ["PGVECTOR_MAX_BATCH_SIZE", "Collection", "PGVectorDB"]

PGVECTOR_MAX_BATCH_SIZE = int(os.environ.get("PGVECTOR_MAX_BATCH_SIZE", 40000))
_DEFAULT_METADATA = {"hnsw:space": "ip", "hnsw:construction_ef": 32, "hnsw:M": 16}


class Collection:
    """One PGVector collection: a table of the connection ``client``.

    ``collection_name``'s hyphens become underscores (AutoGen's rule); the name is otherwise
    kept as given and always quoted. ``embedding_function`` maps a list of texts to vectors.
    """

    def __init__(
        self,
        client: Any = None,
        collection_name: str = "autogen-docs",
        embedding_function: EmbedFunction | None = None,
        metadata: Mapping[str, Any] | None = None,
        get_or_create: bool | None = None,
        model_name: str = "all-MiniLM-L6-v2",
    ) -> None:
        self.client = client
        self.model_name = model_name
        self.name = self.set_collection_name(collection_name)
        self.embedding_function: EmbedFunction = (
            embedding_function if embedding_function is not None else default_embedding()
        )
        self.metadata = dict(metadata) if metadata else dict(_DEFAULT_METADATA)
        self.get_or_create = get_or_create
        self.dimension: int | None = None

    def set_collection_name(self, collection_name: str) -> str:
        self.name = checked_table_name(collection_name)
        return self.name

    # -- the table ---------------------------------------------------------------------------

    def table_exists(self, table_name: str | None = None) -> bool:
        return table_exists(self.client, checked_table_name(table_name or self.name))

    def create_collection(
        self, collection_name: str | None = None, dimension: int | str | None = None
    ) -> None:
        """Create the table (and its indexes) for vectors of ``dimension`` numbers (default:
        the embedding function's)."""
        if collection_name:
            self.set_collection_name(collection_name)
        if dimension:
            self.dimension = int(dimension)
        elif self.dimension is None:
            self.dimension = len(embed(self.embedding_function, ["dimension probe"])[0])
        create_table(self.client, self.name, self.dimension, self.metadata)

    def delete_collection(self, collection_name: str | None = None) -> None:
        if collection_name:
            self.set_collection_name(collection_name)
        sql = import_pg().sql
        self.client.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(self.name)))

    def count(self) -> int:
        sql = import_pg().sql
        row = self.client.execute(
            sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(self.name))
        ).fetchone()
        return int(row[0])

    # -- documents ---------------------------------------------------------------------------

    def add(
        self,
        ids: Sequence[ItemID],
        documents: Sequence[str],
        embeddings: Sequence[Any] | None = None,
        metadatas: Sequence[Any] | None = None,
    ) -> None:
        """Insert new documents; an id already stored is a ``ValueError`` (nothing is written)."""
        self._write(ids, documents, embeddings, metadatas, replace=False)

    def upsert(
        self,
        ids: Sequence[ItemID],
        documents: Sequence[str],
        embeddings: Sequence[Any] | None = None,
        metadatas: Sequence[Any] | None = None,
    ) -> None:
        """Insert documents, replacing those with the same ids."""
        self._write(ids, documents, embeddings, metadatas, replace=True)

    def update(
        self,
        ids: Sequence[ItemID],
        embeddings: Sequence[Any] | None = None,
        metadatas: Sequence[Any] | None = None,
        documents: Sequence[str] | None = None,
    ) -> None:
        """AutoGen's ``update``: the same as :meth:`upsert` (so ``documents`` is required)."""
        if documents is None:
            raise ValueError("Collection.update needs the documents' contents")
        self._write(ids, documents, embeddings, metadatas, replace=True)

    def _write(
        self,
        ids: Sequence[ItemID],
        documents: Sequence[str],
        embeddings: Sequence[Any] | None,
        metadatas: Sequence[Any] | None,
        replace: bool,
    ) -> None:
        if embeddings is None:
            vectors = embed(self.embedding_function, list(documents)) if documents else []
        else:
            vectors = [[float(x) for x in e] for e in embeddings]
        rows = [
            (str(i), doc, vector, dict(meta) if meta else None)
            for i, doc, vector, meta in zip(
                ids, documents, vectors, metadatas or [None] * len(ids), strict=True
            )
        ]
        upsert_rows(self.client, self.name, rows, replace)

    def delete(self, ids: Sequence[ItemID], collection_name: str | None = None) -> None:
        if collection_name:
            self.set_collection_name(collection_name)
        sql = import_pg().sql
        self.client.execute(
            sql.SQL("DELETE FROM {} WHERE id = ANY(%s)").format(sql.Identifier(self.name)),
            ([str(i) for i in ids],),
        )

    def get(
        self,
        ids: Sequence[ItemID] | None = None,
        include: Sequence[str] | None = None,
        where: Mapping[str, Any] | None = None,
        limit: int | str | None = None,
        offset: int | str | None = None,
    ) -> list[Document]:
        """Documents by id (every one when ``ids`` is empty or None), in the order of ``ids``.

        ``include`` names the fields besides the id (``"documents"``, ``"metadatas"``,
        ``"embedding"``; default the first two, and the embedding is always there, as in
        AutoGen); ``where`` keeps the documents whose metadata contains the mapping.
        """
        fields = list(include) if include else ["metadatas", "documents"]
        if where is not None and not isinstance(where, Mapping):
            raise TypeError(
                "PGVectorDB's `where` is a mapping that the documents' metadata must contain "
                "(e.g. {'source': 'a.md'}); SQL text is not accepted"
            )
        keys = [str(i) for i in ids] if ids else None
        rows = select_rows(self.client, self.name, keys, fields, where, limit, offset)
        return [_document(row) for row in rows]

    def query(
        self,
        query_texts: Sequence[str],
        collection_name: str | None = None,
        n_results: int = 10,
        distance_type: str = "euclidean",
        distance_threshold: float = -1,
        include_embedding: bool = False,
    ) -> QueryResults:
        """The ``n_results`` documents nearest to each text, nearest first, with their
        distance (``"euclidean"``, ``"cosine"``: 1 - cosine, ``"inner-product"``: minus the
        inner product); with a positive ``distance_threshold`` only those nearer than it."""
        if collection_name:
            self.set_collection_name(collection_name)
        results: QueryResults = []
        vectors = embed(self.embedding_function, list(query_texts)) if query_texts else []
        for vector in vectors:
            rows = nearest_rows(
                self.client, self.name, vector, distance_type, int(n_results), distance_threshold
            )
            hits = []
            for doc_id, content, meta, embedding, distance in rows:
                doc = Document(id=doc_id, content=content, metadata=meta)
                if include_embedding:
                    doc["embedding"] = floats(embedding)
                hits.append((doc, float(distance)))
            results.append(hits)
        return results

    # AutoGen's helpers, computing what pgvector's operators compute.
    @staticmethod
    def euclidean_distance(arr1: Sequence[float], arr2: Sequence[float]) -> float:
        return float(sum((a - b) ** 2 for a, b in zip(arr1, arr2, strict=True)) ** 0.5)

    @staticmethod
    def cosine_distance(arr1: Sequence[float], arr2: Sequence[float]) -> float:
        dot = sum(a * b for a, b in zip(arr1, arr2, strict=True))
        norms = sum(a * a for a in arr1) ** 0.5 * sum(b * b for b in arr2) ** 0.5
        return float(1.0 - dot / norms)

    @staticmethod
    def inner_product_distance(arr1: Sequence[float], arr2: Sequence[float]) -> float:
        return float(-sum(a * b for a, b in zip(arr1, arr2, strict=True)))

    @staticmethod
    def convert_string_to_array(array_string: Any) -> Any:
        """``"[1, 2.5]"`` (or ``"[1 2.5]"``) as ``[1.0, 2.5]``; anything else as it is."""
        if not isinstance(array_string, str):
            return array_string
        return [float(x) for x in array_string.strip("[]").replace(",", " ").split()]


class PGVectorDB(DocStore):
    """A :class:`~parley.agentchat.contrib.vectordb.base.VectorDB` over PostgreSQL + pgvector.

    Args:
        conn: a psycopg 3 connection to use (it should be in autocommit mode).
        connection_string: a libpq connection string or ``postgresql://`` URL.
        host, port, dbname, username, password, connect_timeout: the parts of a connection,
            used when neither ``conn`` nor ``connection_string`` is given (``host`` required).
        embedding_function: texts -> vectors; default parley's WordLlama model.
        metadata: the HNSW settings of new collections (``hnsw:M``, ``hnsw:construction_ef``).
        model_name: AutoGen's SentenceTransformer model name; kept, not loaded (see the module
            docstring).
    """

    def __init__(
        self,
        *,
        conn: Any = None,
        connection_string: str | None = None,
        host: str | None = None,
        port: int | str | None = None,
        dbname: str | None = None,
        username: str | None = None,
        password: str | None = None,
        connect_timeout: int | None = 10,
        embedding_function: EmbedFunction | None = None,
        metadata: Mapping[str, Any] | None = None,
        model_name: str = "all-MiniLM-L6-v2",
    ) -> None:
        self.client = self.establish_connection(
            conn=conn,
            connection_string=connection_string,
            host=host,
            port=port,
            dbname=dbname,
            username=username,
            password=password,
            connect_timeout=connect_timeout,
        )
        self._embed: EmbedFunction = (
            embedding_function if embedding_function is not None else default_embedding()
        )
        self.embedding_function: EmbedFunction | None = self._embed
        self.model_name = model_name
        self.metadata = dict(metadata) if metadata is not None else None
        self.type = "pgvector"
        self.active_collection: Collection | None = None

    def establish_connection(
        self,
        conn: Any = None,
        connection_string: str | None = None,
        host: str | None = None,
        port: int | str | None = None,
        dbname: str | None = None,
        username: str | None = None,
        password: str | None = None,
        connect_timeout: int | None = 10,
    ) -> Any:
        """The connection to use (``conn``, else a new one), with the ``vector`` extension
        created if missing and its type registered. ``PermissionError`` without any of
        ``conn``, ``connection_string`` and ``host``."""
        self.client = connect(
            conn, connection_string, host, port, dbname, username, password, connect_timeout
        )
        return self.client

    def _new_collection(self, name: str, get_or_create: bool | None = None) -> Collection:
        return Collection(
            client=self.client,
            collection_name=name,
            embedding_function=self._embed,
            metadata=self.metadata,
            get_or_create=get_or_create,
            model_name=self.model_name,
        )

    def create_collection(
        self, collection_name: str, overwrite: bool = False, get_or_create: bool = True
    ) -> Collection:
        collection = self._new_collection(collection_name, get_or_create)
        if collection.table_exists():
            if not overwrite:
                if get_or_create:
                    self.active_collection = collection
                    return collection
                raise ValueError(f"Collection {collection_name} already exists.")
            collection.delete_collection()
        collection.create_collection()
        self.active_collection = collection
        return collection

    def get_collection(self, collection_name: str | None = None) -> Collection:
        if collection_name is None:
            if self.active_collection is None:
                raise ValueError("No collection is specified.")
            return self.active_collection
        active = self.active_collection
        if active is not None and active.name == checked_table_name(collection_name):
            return active
        collection = self._new_collection(collection_name)
        if not collection.table_exists():
            raise ValueError(f"Collection {collection_name} does not exist.")
        self.active_collection = collection
        return collection

    def delete_collection(self, collection_name: str) -> None:
        self._new_collection(collection_name).delete_collection()
        active = self.active_collection
        if active is not None and active.name == checked_table_name(collection_name):
            self.active_collection = None

    def _insert(self, docs: list[Document], collection_name: str | None, upsert: bool) -> None:
        write_in_batches(
            self.get_collection(collection_name), docs, upsert, PGVECTOR_MAX_BATCH_SIZE, _columns
        )

    def update_docs(
        self, docs: list[Document], collection_name: str | None = None, **kwargs: Any
    ) -> None:
        self.insert_docs(docs, collection_name, upsert=True)

    def delete_docs(
        self, ids: list[ItemID], collection_name: str | None = None, **kwargs: Any
    ) -> None:
        self.get_collection(collection_name).delete(ids)

    def _nearest(
        self, queries: list[str], collection_name: str | None, n: int, options: dict[str, Any]
    ) -> QueryResults:
        return self.get_collection(collection_name).query(queries, n_results=n, **options)

    def _get(self, lookup: Lookup) -> list[Document]:
        collection = self.get_collection(lookup.collection_name)
        return collection.get(lookup.ids, include=lookup.include, **lookup.options)


def _columns(docs: Sequence[Document]) -> dict[str, Any]:
    embeddings = [d.get("embedding") for d in docs]
    return {
        "ids": [d["id"] for d in docs],
        "documents": [d["content"] for d in docs],
        # Given for all or for none: a partial list is computed whole (as Chroma's store does).
        "embeddings": embeddings if all(e is not None for e in embeddings) else None,
        "metadatas": [d.get("metadata") for d in docs],
    }


def _document(row: dict[str, Any]) -> Document:
    doc = Document(id=row["id"])
    if "documents" in row:
        doc["content"] = row["documents"]
    if "metadatas" in row:
        doc["metadata"] = row["metadatas"]
    doc["embedding"] = floats(row["embedding"])
    return doc
