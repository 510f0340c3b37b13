"""RetrieveChat's vector databases (AutoGen's ``autogen.agentchat.contrib.vectordb``).

The protocol (:class:`~.base.VectorDB`, :class:`~.base.Document`, :data:`~.base.QueryResults`),
the factory (:class:`~.base.VectorDBFactory`), and three stores imported on first use:
:class:`~.chromadb.ChromaVectorDB` (``parley[retrieve]``), :class:`~.qdrant.QdrantVectorDB`
(``parley[retrieve-qdrant]``) and :class:`~.pgvectordb.PGVectorDB` (``parley[retrieve-pgvector]``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...._lazy import lazy_exports

__all__ = [
    "ChromaVectorDB",
    "Document",
    "ItemID",
    "PGVectorDB",
    "QdrantVectorDB",
    "QueryResults",
    "VectorDB",
    "VectorDBFactory",
]

if TYPE_CHECKING:
    from ._factory import VectorDBFactory
    from .base import Document, ItemID, QueryResults, VectorDB
    from .chromadb import ChromaVectorDB
    from .pgvectordb import PGVectorDB
    from .qdrant import QdrantVectorDB
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            **dict.fromkeys(("Document", "ItemID", "QueryResults", "VectorDB"), ".base"),
            "VectorDBFactory": "._factory",
            "ChromaVectorDB": ".chromadb",
            "QdrantVectorDB": ".qdrant",
            "PGVectorDB": ".pgvectordb",
        },
        submodules=("base", "utils", "chromadb", "qdrant", "pgvectordb"),
    )
