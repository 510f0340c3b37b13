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

from collections.abc import Callable
from typing import Any, Literal

from .retrieve_user_proxy_agent import RetrieveUserProxyAgent
from .vectordb.qdrant import QdrantVectorDB

__all__ = ["QdrantRetrieveUserProxyAgent"]


class QdrantRetrieveUserProxyAgent(RetrieveUserProxyAgent):
    """RetrieveChat over Qdrant, configured as AutoGen's older class was."""

    def __init__(
        self,
        name: str = "RetrieveChatAgent",
        human_input_mode: Literal["ALWAYS", "NEVER", "TERMINATE"] = "ALWAYS",
        is_termination_msg: Callable[[dict[str, Any]], bool] | None = None,
        retrieve_config: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
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
        super().__init__(
            name=name,
            human_input_mode=human_input_mode,
            is_termination_msg=is_termination_msg,
            retrieve_config=config,
            **kwargs,
        )
