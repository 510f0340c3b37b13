"""Filling RetrieveChat's collection: the documents of ``docs_path`` chunked into a vector database.

Called once, before the first retrieval, by ``RetrieveUserProxyAgent.retrieve_docs``.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...retrieve_utils import (
    DEFAULT_LIMITS,
    ReadLimits,
    create_vector_db_from_dir,
    get_files_from_dir,
    query_vector_db,
    split_files_to_chunks,
)
from .vectordb.base import HASH_LENGTH, Document, QueryResults, VectorDB
from .vectordb.utils import chroma_results_to_query_results, filter_results_by_distance

__all__ = [
    "Chunking",
    "RetrievePlan",
    "fill_collection",
    "index_with_chroma_client",
    "query_with_chroma_client",
]

logger = logging.getLogger("parley.agentchat.contrib.retrieve_user_proxy_agent")


@dataclass(frozen=True)
class Chunking:
    """How the retrieve_config reads the documents and cuts them into chunks (both paths)."""

    chunk_token_size: int
    chunk_mode: str
    must_break_at_empty_line: bool
    custom_text_split_function: Callable[[str], list[str]] | None
    custom_text_types: list[str]
    recursive: bool
    limits: ReadLimits = DEFAULT_LIMITS


@dataclass
class RetrievePlan:
    """What the retrieve_config says about the collection, the documents and the search, for
    both paths: a ``VectorDB`` (:func:`fill_collection`) and AutoGen's older Chroma client
    (:func:`index_with_chroma_client`, :func:`query_with_chroma_client`)."""

    name: str
    docs_path: Any
    get_or_create: bool
    overwrite: bool
    new_docs: bool
    extra_docs: bool
    embedding_model: str
    embedding_function: Any
    distance_threshold: float
    chunking: Chunking


def chunk_id(chunk: str, db_type: str) -> str:
    """A chunk's id: a UUID from its MD5 for Qdrant (whose ids are UUIDs), else a prefix of its
    BLAKE2b, so that the same chunk always gets the same id."""
    if db_type == "qdrant":
        return str(uuid.UUID(hex=hashlib.md5(chunk.encode("utf-8")).hexdigest()))
    return hashlib.blake2b(chunk.encode("utf-8")).hexdigest()[:HASH_LENGTH]


def fill_collection(db: VectorDB, plan: RetrievePlan) -> None:
    """Make the collection ``db``'s active one, and add the chunks it does not have yet."""
    must_chunk = plan.new_docs
    if not plan.docs_path:
        try:
            db.get_collection(plan.name)
        except ValueError as e:
            raise ValueError(
                f"`docs_path` is not provided, and the collection `{plan.name}` does not exist "
                "either: give `docs_path`, or create the collection first."
            ) from e
        logger.warning(
            "`docs_path` is not provided. Using the existing collection `%s`.", plan.name
        )
        plan.overwrite, plan.get_or_create, must_chunk = False, True, False
    elif plan.get_or_create and not plan.overwrite:
        try:
            db.get_collection(plan.name)
            logger.info("Using the existing collection `%s`.", plan.name)
        except ValueError:
            must_chunk = True
    else:
        must_chunk = True
    db.active_collection = db.create_collection(
        plan.name, overwrite=plan.overwrite, get_or_create=plan.get_or_create
    )
    if not must_chunk:
        return
    how = plan.chunking
    files = get_files_from_dir(
        plan.docs_path, how.custom_text_types, how.recursive, limits=how.limits
    )
    chunks, sources = split_files_to_chunks(
        files,
        how.chunk_token_size,
        how.chunk_mode,
        how.must_break_at_empty_line,
        how.custom_text_split_function,
        limits=how.limits,
    )
    logger.info("Found %d chunks.", len(chunks))
    stored: set[Any] = set()
    if plan.new_docs:
        stored = {
            d["id"] for d in db.get_docs_by_ids(ids=None, collection_name=plan.name, include=[])
        }
    docs: list[Document] = []
    seen: set[str] = set()
    db_type = getattr(db, "type", "")
    for chunk, source in zip(chunks, sources, strict=True):
        item_id = chunk_id(chunk, db_type)
        if item_id in seen or item_id in stored:
            continue  # identical chunks are stored once; stored ones are not sent again
        seen.add(item_id)
        docs.append(Document(id=item_id, content=chunk, metadata=source))
    db.insert_docs(docs=docs, collection_name=plan.name, upsert=True)


def index_with_chroma_client(client: Any, plan: RetrievePlan) -> Any:
    """AutoGen's older path, a Chroma client without a ``VectorDB``: index ``docs_path`` into
    the client's collection (an in-memory client when None)."""
    if client is None:
        from ..._retrieve_embed import import_chromadb, offline_settings

        chromadb = import_chromadb()
        client = chromadb.EphemeralClient(settings=offline_settings(chromadb))
    how = plan.chunking
    return create_vector_db_from_dir(
        dir_path=plan.docs_path,
        max_tokens=how.chunk_token_size,
        client=client,
        collection_name=plan.name,
        chunk_mode=how.chunk_mode,
        must_break_at_empty_line=how.must_break_at_empty_line,
        embedding_model=plan.embedding_model,
        get_or_create=plan.get_or_create,
        embedding_function=plan.embedding_function,
        custom_text_split_function=how.custom_text_split_function,
        custom_text_types=how.custom_text_types,
        recursive=how.recursive,
        extra_docs=plan.extra_docs,
        limits=how.limits,
    )


def query_with_chroma_client(
    client: Any, plan: RetrievePlan, problem: str, n_results: int, search_string: str
) -> QueryResults:
    found = dict(
        query_vector_db(
            query_texts=[problem],
            n_results=n_results,
            search_string=search_string,
            client=client,
            collection_name=plan.name,
            embedding_model=plan.embedding_model,
            embedding_function=plan.embedding_function,
        )
    )
    found["contents"] = found.pop("documents", None)
    columns = {k: v for k, v in found.items() if k not in ("included", "data", "uris")}
    return filter_results_by_distance(
        chroma_results_to_query_results(columns, "distances"), plan.distance_threshold
    )
