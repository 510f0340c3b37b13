"""``QdrantRetrieveUserProxyAgent`` (AutoGen's ``qdrant_retrieve_user_proxy_agent``): RetrieveChat
bound to Qdrant, from before the ``vector_db`` option existed.

Here it is :class:`RetrieveUserProxyAgent` over a :class:`QdrantVectorDB` built from the old
keys: ``client`` (a ``QdrantClient``; in memory when absent), ``hnsw_config``,
``quantization_config`` and ``on_disk`` for new collections. AutoGen embedded with FastEmbed's
``embedding_model``, which downloads its model; parley uses its bundled default (or the
``embedding_function`` given), so ``embedding_model`` is not used. Needs
``pip install 'parley[retrieve-qdrant]'``.
"""

from __future__ import annotations

from typing import Any

from .retrieve_user_proxy_agent import RetrieveUserProxyAgent
from .vectordb.qdrant import QdrantVectorDB

__all__ = ["QdrantRetrieveUserProxyAgent"]


class QdrantRetrieveUserProxyAgent(RetrieveUserProxyAgent):
    """RetrieveChat over Qdrant, configured as AutoGen's older class was."""

    def _read_retrieve_config(self, retrieve_config: dict[str, Any] | None) -> dict[str, Any]:
        config = dict(retrieve_config or {})
        options: dict[str, Any] = {}
        for key, option in (
            ("hnsw_config", "hnsw_config"),
            ("quantization_config", "quantization_config"),
            ("on_disk", "on_disk_payload"),
        ):
            if config.get(key) is not None:
                options[option] = config[key]
        config["vector_db"] = QdrantVectorDB(
            client=config.pop("client", None),
            embedding_function=config.get("embedding_function"),
            collection_options=options,
        )
        return config
