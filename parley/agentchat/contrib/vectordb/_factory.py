"""``VectorDBFactory``: a vector database by type name (also importable from ``.base``)."""

from __future__ import annotations

from typing import Any, ClassVar

from .base import VectorDB

__all__ = ["VectorDBFactory"]

_ALIASES = {
    "chroma": "chroma",
    "chromadb": "chroma",
    "qdrant": "qdrant",
    "qdrantdb": "qdrant",
    "pgvector": "pgvector",
    "pgvectordb": "pgvector",
    "mdb": "mongodb",
    "mongodb": "mongodb",
    "atlas": "mongodb",
    "couchbase": "couchbase",
    "couchbasedb": "couchbase",
    "capella": "couchbase",
}


class VectorDBFactory:
    """Builds a vector database by type name (case-insensitive)."""

    PREDEFINED_VECTOR_DB: ClassVar[list[str]] = [
        "chroma",
        "pgvector",
        "mongodb",
        "qdrant",
        "couchbase",
    ]

    @staticmethod
    def create_vector_db(db_type: str, **kwargs: Any) -> VectorDB:
        kind = _ALIASES.get(db_type.lower()) if isinstance(db_type, str) else None
        if kind == "chroma":
            from .chromadb import ChromaVectorDB

            return ChromaVectorDB(**kwargs)
        if kind == "qdrant":
            from .qdrant import QdrantVectorDB

            return QdrantVectorDB(**kwargs)
        if kind == "pgvector":
            from .pgvectordb import PGVectorDB

            return PGVectorDB(**kwargs)
        if kind is not None:
            raise NotImplementedError(
                f"parley does not ship the {kind!r} vector database; pass an object with the "
                f"members of parley.agentchat.contrib.vectordb.base.VectorDB as `vector_db`"
            )
        raise ValueError(
            f"Unsupported vector database type: {db_type}. "
            f"Valid types are {VectorDBFactory.PREDEFINED_VECTOR_DB}."
        )

    # The name the issue uses; the same factory.
    create_vector_database = create_vector_db
