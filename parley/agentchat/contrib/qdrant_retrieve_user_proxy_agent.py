"""``QdrantRetrieveUserProxyAgent`` (AutoGen's ``qdrant_retrieve_user_proxy_agent``): RetrieveChat
bound to Qdrant, from before the ``vector_db`` option existed, and AutoGen's two helpers
:func:`create_qdrant_from_dir` and :func:`query_qdrant`.

The agent is :class:`RetrieveUserProxyAgent` over a :class:`QdrantVectorDB` built from the old
keys: ``client`` (a ``QdrantClient``; in memory when absent), ``hnsw_config``,
``quantization_config`` and ``on_disk`` for new collections. AutoGen embedded with FastEmbed's
``embedding_model``, which downloads its model; parley uses its bundled default (or the
``embedding_function`` given), so ``embedding_model`` is not used, here and in the helpers.
Needs ``pip install 'parley[retrieve-qdrant]'``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...retrieve_utils import TEXT_FORMATS, get_files_from_dir, split_files_to_chunks
from .retrieve_user_proxy_agent import RetrieveUserProxyAgent
from .vectordb.base import Document
from .vectordb.qdrant import QdrantVectorDB

__all__ = ["QdrantRetrieveUserProxyAgent", "create_qdrant_from_dir", "query_qdrant"]

_DEFAULT_MODEL = "BAAI/bge-small-en-v1.5"
# The payload keys FastEmbed's ``client.add`` wrote, so that collections look as AutoGen's did
# (a payload index or filter on "document" works on either).
_CONTENT_KEY = "document"
_METADATA_KEY = "metadata"
_BATCH = 100


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


def _store(
    client: Any,
    options: dict[str, Any] | None,
    embedding_function: Callable[..., Any] | None,
    collection_options: dict[str, Any] | None = None,
) -> QdrantVectorDB:
    # No client and no options: an in-memory database (AutoGen's QdrantClient() meant a server
    # on localhost).
    return QdrantVectorDB(
        client=client,
        embedding_function=embedding_function,
        content_payload_key=_CONTENT_KEY,
        metadata_payload_key=_METADATA_KEY,
        collection_options=collection_options,
        **dict(options or {}),
    )


def create_qdrant_from_dir(
    dir_path: str | list[str],
    max_tokens: int = 4000,
    client: Any = None,
    collection_name: str = "all-my-documents",
    chunk_mode: str = "multi_lines",
    must_break_at_empty_line: bool = True,
    embedding_model: str = _DEFAULT_MODEL,
    custom_text_split_function: Callable[[str], list[str]] | None = None,
    custom_text_types: list[str] = TEXT_FORMATS,
    recursive: bool = True,
    extra_docs: bool = False,
    parallel: int = 0,
    on_disk: bool = False,
    quantization_config: Any = None,
    hnsw_config: Any = None,
    payload_indexing: bool = False,
    qdrant_client_options: dict[str, Any] | None = None,
    *,
    embedding_function: Callable[..., Any] | None = None,
) -> None:
    """Index the files of ``dir_path`` (a directory, a file, a URL or a list of them) into the
    Qdrant collection ``collection_name`` of ``client``, creating it if needed.

    Chunks are made as by :func:`parley.retrieve_utils.split_files_to_chunks` and stored with
    integer ids from 0 (after the documents already there with ``extra_docs=True``), their
    text under the payload key ``"document"`` and ``{"source": ...}`` under ``"metadata"``.
    ``on_disk``, ``quantization_config`` and ``hnsw_config`` shape a new collection;
    ``payload_indexing`` adds a full-text index on ``"document"``. Without a ``client`` one is
    made from ``qdrant_client_options`` (in memory when empty). ``embedding_model`` (FastEmbed's)
    and ``parallel`` are not used: chunks are embedded by ``embedding_function`` (parley's
    bundled model by default), which :func:`query_qdrant` must then be given too.
    """
    del embedding_model, parallel
    collection_options: dict[str, Any] = {}
    if quantization_config is not None:
        collection_options["quantization_config"] = quantization_config
    if hnsw_config is not None:
        collection_options["hnsw_config"] = hnsw_config
    if on_disk:
        collection_options["on_disk_payload"] = True
    store = _store(client, qdrant_client_options, embedding_function, collection_options)

    chunks, sources = split_files_to_chunks(
        get_files_from_dir(dir_path, custom_text_types, recursive),
        max_tokens,
        chunk_mode,
        must_break_at_empty_line,
        custom_text_split_function,
    )

    store.create_collection(collection_name, overwrite=False, get_or_create=True)
    first = store.client.count(collection_name, exact=True).count if extra_docs else 0
    for start in range(0, len(chunks), _BATCH):
        docs = [
            Document(id=first + i, content=chunks[i], metadata=sources[i])
            for i in range(start, min(start + _BATCH, len(chunks)))
        ]
        store.insert_docs(docs, collection_name, upsert=True)

    if payload_indexing:
        from qdrant_client import models  # present: the store above needed it

        store.client.create_payload_index(
            collection_name=collection_name,
            field_name=_CONTENT_KEY,
            field_schema=models.TextIndexParams(
                type=models.TextIndexType.TEXT,
                tokenizer=models.TokenizerType.WORD,
                min_token_len=2,
                max_token_len=15,
            ),
        )


def query_qdrant(
    query_texts: list[str],
    n_results: int = 10,
    client: Any = None,
    collection_name: str = "all-my-documents",
    search_string: str = "",
    embedding_model: str = _DEFAULT_MODEL,
    qdrant_client_options: dict[str, Any] | None = None,
    *,
    embedding_function: Callable[..., Any] | None = None,
) -> dict[str, list[list[Any]]]:
    """The ``n_results`` chunks nearest to each query text, as
    ``{"ids": [[...]], "documents": [[...]], "distances": [[...]], "metadatas": [[...]]}``,
    one inner list per query, nearest first. As in AutoGen, ``"distances"`` holds Qdrant's
    cosine *scores* (higher is nearer). ``search_string`` keeps only chunks whose text contains
    it. ``embedding_model`` is not used (see :func:`create_qdrant_from_dir`)."""
    del embedding_model
    store = _store(client, qdrant_client_options, embedding_function)
    found = store.retrieve_docs(
        query_texts, collection_name, n_results, search_string=search_string
    )
    return {
        "ids": [[doc["id"] for doc, _ in hits] for hits in found],
        "documents": [[doc["content"] for doc, _ in hits] for hits in found],
        "distances": [[1.0 - distance for _, distance in hits] for hits in found],
        "metadatas": [[dict(doc.get("metadata") or {}) for doc, _ in hits] for hits in found],
    }
