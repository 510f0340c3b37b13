"""The vector-database protocol of RetrieveChat (AutoGen's ``agentchat.contrib.vectordb.base``).

A store is any object with the members of :class:`VectorDB` (checked with ``isinstance``, as
``RetrieveUserProxyAgent`` does to choose its path). :class:`VectorDBFactory` builds the stores
parley ships: ChromaDB (``pip install 'parley[retrieve]'``), Qdrant
(``pip install 'parley[retrieve-qdrant]'``) and PostgreSQL with pgvector
(``pip install 'parley[retrieve-pgvector]'``), each imported only when asked for.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypedDict, runtime_checkable

__all__ = [
    "HASH_LENGTH",
    "Document",
    "ItemID",
    "Metadata",
    "QueryResults",
    "Vector",
    "VectorDB",
    "VectorDBFactory",
]

if TYPE_CHECKING:
    from ._factory import VectorDBFactory

Metadata: TypeAlias = Mapping[str, Any] | None
Vector: TypeAlias = Sequence[float]
ItemID: TypeAlias = str | int
HASH_LENGTH = int(os.environ.get("HASH_LENGTH", 8))


class Document(TypedDict, total=False):
    """One stored chunk. ``id`` and ``content`` are required when inserting."""

    id: ItemID | None
    content: str
    metadata: Metadata
    embedding: Vector | None


# One list per query, each hit a (document, distance) pair, nearest first.
QueryResults: TypeAlias = list[list[tuple[Document, float]]]


def chunk_ids(chunks: Sequence[str], hash_length: int = HASH_LENGTH) -> list[str]:
    """AutoGen's chunk ids: the first ``hash_length`` hex digits of the chunk's BLAKE2b."""
    return [hashlib.blake2b(c.encode("utf-8")).hexdigest()[:hash_length] for c in chunks]


@runtime_checkable
class VectorDB(Protocol):
    """What RetrieveChat needs from a vector database.

    ``create_collection``: a missing collection is created; an existing one is deleted and
    recreated with ``overwrite``, else returned with ``get_or_create``, else ``ValueError``.
    ``get_collection`` raises ``ValueError`` for a missing collection. ``retrieve_docs``
    returns, per query, up to ``n_results`` hits nearest first, and with a positive
    ``distance_threshold`` only those whose distance is below it.
    """

    active_collection: Any = None
    type: str = ""
    embedding_function: Callable[..., Any] | None = None

    def create_collection(
        self, collection_name: str, overwrite: bool = False, get_or_create: bool = True
    ) -> Any: ...

    def get_collection(self, collection_name: str | None = None) -> Any: ...

    def delete_collection(self, collection_name: str) -> Any: ...

    def generate_chunk_ids(self, chunks: list[str], hash_length: int = HASH_LENGTH) -> list[ItemID]:
        # AutoGen declares this one without ``self``; a store must still have it to pass the
        # isinstance check, so it is part of the protocol here too.
        ...

    def insert_docs(
        self, docs: list[Document], collection_name: str | None = None, upsert: bool = False
    ) -> None: ...

    def update_docs(self, docs: list[Document], collection_name: str | None = None) -> None: ...

    def delete_docs(self, ids: list[ItemID], collection_name: str | None = None) -> None: ...

    def retrieve_docs(
        self,
        queries: list[str],
        collection_name: str | None = None,
        n_results: int = 10,
        distance_threshold: float = -1,
    ) -> QueryResults: ...

    def get_docs_by_ids(
        self,
        ids: list[ItemID] | None = None,
        collection_name: str | None = None,
        include: list[str] | None = None,
    ) -> list[Document]: ...


def __getattr__(name: str) -> Any:
    # VectorDBFactory lives in _factory (it imports the stores, which import this module);
    # AutoGen's code imports it from here.
    if name == "VectorDBFactory":
        import importlib

        return importlib.import_module("._factory", __package__).VectorDBFactory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
