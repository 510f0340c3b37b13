"""The vectordb protocol on the two real stores parley ships: ChromaDB and Qdrant (local mode)."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from parley.agentchat.contrib.vectordb import (
    ChromaVectorDB,
    QdrantVectorDB,
    VectorDB,
    VectorDBFactory,
)
from parley.agentchat.contrib.vectordb import base as vectordb_base
from parley.agentchat.contrib.vectordb.utils import (
    chroma_results_to_query_results,
    filter_results_by_distance,
)

DOCS = [
    {"id": "etna", "content": "Mount Etna is an active volcano in Sicily.", "metadata": {"source": "v.txt"}},
    {"id": "bread", "content": "Sourdough bread rises with wild yeast.", "metadata": {"source": "b.md"}},
    {"id": "trench", "content": "The Mariana Trench is the deepest part of the ocean.", "metadata": {"source": "o.pdf"}},
]  # fmt: skip


def make_store(kind: str, where: Path | None, **kwargs: Any) -> Any:
    """A store in ``where``; Qdrant's in memory when None. Chroma's in-memory clients share
    one database per process, so a test's Chroma store is always in a directory of its own."""
    if kind == "chroma":
        return ChromaVectorDB(path=str(where or _fresh_dir()), **kwargs)
    if where is None:
        return QdrantVectorDB(**kwargs)
    return QdrantVectorDB(path=str(where), **kwargs)


def _fresh_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="parley-chroma-"))


@pytest.fixture(params=["chroma", "qdrant"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_both_stores_satisfy_the_protocol(kind: str) -> None:
    store = make_store(kind, None)
    assert isinstance(store, VectorDB)
    assert store.type == kind


def test_insert_and_retrieve_nearest_first(kind: str) -> None:
    store = make_store(kind, None)
    store.create_collection("facts")
    store.insert_docs([dict(d) for d in DOCS], upsert=True)
    (hits,) = store.retrieve_docs(["Which volcano is in Sicily?"], n_results=3)
    assert next(doc["id"] for doc, _ in hits) == "etna"
    assert hits[0][0]["content"] == DOCS[0]["content"]
    assert hits[0][0]["metadata"] == {"source": "v.txt"}
    distances = [d for _, d in hits]
    assert distances == sorted(distances)
    two = store.retrieve_docs(["ocean depth", "baking bread"], n_results=1)
    assert [[doc["id"] for doc, _ in hits] for hits in two] == [["trench"], ["bread"]]
    # A positive threshold keeps only the hits nearer than it.
    near = store.retrieve_docs(
        ["Which volcano is in Sicily?"], n_results=3, distance_threshold=distances[0] + 1e-6
    )
    assert [doc["id"] for doc, _ in near[0]] == ["etna"]


def test_collection_semantics(kind: str) -> None:
    store = make_store(kind, None)
    store.create_collection("docs")
    store.insert_docs([dict(DOCS[0])])
    assert [
        d["id"]
        for d in store.create_collection("docs", get_or_create=True) and store.get_docs_by_ids()
    ] == ["etna"]
    with pytest.raises(ValueError, match="already exists"):
        store.create_collection("docs", overwrite=False, get_or_create=False)
    store.create_collection("docs", overwrite=True)
    assert store.get_docs_by_ids(collection_name="docs") == []
    with pytest.raises(ValueError, match="does not exist"):
        store.get_collection("never-made")
    store.delete_collection("docs")
    with pytest.raises(ValueError, match="does not exist"):
        store.get_collection("docs")
    with pytest.raises(ValueError, match="No collection is specified"):
        store.get_collection()


def test_update_delete_and_get_by_ids(kind: str) -> None:
    store = make_store(kind, None)
    store.create_collection("docs")
    store.insert_docs([dict(d) for d in DOCS])
    store.update_docs(
        [{"id": "bread", "content": "Rye bread is dense.", "metadata": {"source": "r.md"}}]
    )
    (bread,) = store.get_docs_by_ids(["bread"])
    assert bread["content"] == "Rye bread is dense."
    assert bread["metadata"] == {"source": "r.md"}
    store.delete_docs(["etna"])
    assert sorted(d["id"] for d in store.get_docs_by_ids()) == ["bread", "trench"]
    (with_vector,) = store.get_docs_by_ids(
        ["trench"], include=["embeddings", "documents", "metadatas"]
    )
    assert len(with_vector["embedding"]) == 256  # WordLlama's size


def test_persistence_across_two_clients(kind: str, tmp_path: Path) -> None:
    first = make_store(kind, tmp_path / "db")
    first.create_collection("kept")
    first.insert_docs([dict(d) for d in DOCS])
    if kind == "qdrant":
        first.client.close()  # local Qdrant locks its directory for one client at a time
    else:
        del first
    second = make_store(kind, tmp_path / "db")
    second.get_collection("kept")
    assert sorted(d["id"] for d in second.get_docs_by_ids()) == ["bread", "etna", "trench"]
    (hits,) = second.retrieve_docs(["deepest ocean trench"], n_results=1)
    assert hits[0][0]["id"] == "trench"


class KeywordEmbedding:
    """A user's embedding function: one dimension per keyword."""

    KEYWORDS = ("volcano", "bread", "ocean")

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, input: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        return [[float(k in text.lower()) + 0.01 for k in self.KEYWORDS] for text in input]


def test_a_custom_embedding_function_is_used(kind: str) -> None:
    embedding = KeywordEmbedding()
    store = make_store(kind, None, embedding_function=embedding)
    assert store.embedding_function is embedding
    store.create_collection("keywords")
    store.insert_docs([dict(d) for d in DOCS])
    (hits,) = store.retrieve_docs(["bread"], n_results=1)
    assert hits[0][0]["id"] == "bread"
    assert embedding.calls >= 2
    (doc,) = store.get_docs_by_ids(["etna"], include=["embeddings"])
    assert len(doc["embedding"]) == 3


def test_insert_needs_ids_and_contents(kind: str) -> None:
    store = make_store(kind, None)
    store.create_collection("docs")
    with pytest.raises(ValueError, match="id"):
        store.insert_docs([{"id": None, "content": "x"}])
    with pytest.raises(ValueError, match="content"):
        store.insert_docs([{"id": "1"}])


def test_chunk_ids() -> None:
    chroma = make_store("chroma", None)
    qdrant = make_store("qdrant", None)
    assert chroma.generate_chunk_ids(["abc"]) == [vectordb_base.chunk_ids(["abc"])[0]]
    assert len(chroma.generate_chunk_ids(["abc"])[0]) == vectordb_base.HASH_LENGTH
    (uuid_id,) = qdrant.generate_chunk_ids(["abc"])
    assert uuid_id == "90015098-3cd2-4fb0-d696-3f7d28e17f72"  # MD5 of "abc" as a UUID


def test_factory() -> None:
    assert isinstance(
        VectorDBFactory.create_vector_db("ChromaDB", path=str(_fresh_dir())), ChromaVectorDB
    )
    assert isinstance(VectorDBFactory.create_vector_database("qdrant"), QdrantVectorDB)
    assert vectordb_base.VectorDBFactory is VectorDBFactory  # AutoGen's import path
    with pytest.raises(
        ValueError, match=r"Unsupported vector database type: faiss\. Valid types are \['chroma'"
    ):
        VectorDBFactory.create_vector_db("faiss")
    with pytest.raises(NotImplementedError, match="mongodb"):
        VectorDBFactory.create_vector_db("atlas")


def test_a_user_store_must_have_every_member() -> None:
    class Partial:
        active_collection = None
        type = "mine"
        embedding_function = None

        def create_collection(
            self, collection_name: str, overwrite: bool = False, get_or_create: bool = True
        ) -> None: ...
        def get_collection(self, collection_name: str | None = None) -> None: ...
        def delete_collection(self, collection_name: str) -> None: ...
        def insert_docs(
            self, docs: Any, collection_name: Any = None, upsert: bool = False
        ) -> None: ...
        def update_docs(self, docs: Any, collection_name: Any = None) -> None: ...
        def delete_docs(self, ids: Any, collection_name: Any = None) -> None: ...
        def retrieve_docs(
            self,
            queries: Any,
            collection_name: Any = None,
            n_results: int = 10,
            distance_threshold: float = -1,
        ) -> Any: ...
        def get_docs_by_ids(
            self, ids: Any = None, collection_name: Any = None, include: Any = None
        ) -> Any: ...

    assert not isinstance(Partial(), VectorDB)

    class Complete(Partial):
        def generate_chunk_ids(self, chunks: Any, hash_length: int = 8) -> Any: ...

    assert isinstance(Complete(), VectorDB)


def test_result_helpers() -> None:
    data = {
        "ids": [["a", "b"]],
        "contents": [["first", "second"]],
        "metadatas": [[{"source": "x"}, None]],
        "distances": [[0.1, 0.7]],
        "embeddings": None,
    }
    results = chroma_results_to_query_results(data)
    assert results == [
        [
            ({"id": "a", "content": "first", "metadata": {"source": "x"}}, 0.1),
            ({"id": "b", "content": "second", "metadata": None}, 0.7),
        ]
    ]
    assert filter_results_by_distance(results, 0.5) == [[results[0][0]]]
    assert filter_results_by_distance(results, -1) is results
