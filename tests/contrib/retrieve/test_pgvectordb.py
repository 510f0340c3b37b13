"""PGVectorDB (AutoGen's ``pgvectordb``) against a real PostgreSQL with pgvector on loopback.

The server is the session's (``pgvector_server`` in conftest.py: initdb into a temporary
directory, pgvector's extension created); each test starts with no tables.
"""

from __future__ import annotations

import logging
import math
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from parley import AssistantAgent
from parley.agentchat.contrib.retrieve_user_proxy_agent import RetrieveUserProxyAgent
from parley.agentchat.contrib.vectordb import PGVectorDB, VectorDB, VectorDBFactory
from parley.agentchat.contrib.vectordb.pgvectordb import Collection
from parley.testing import FakeLLMServer
from parley.testing.postgres import PostgresServer

from ._corpus import OCEAN

pytestmark = pytest.mark.pgvector

DOCS = [
    {"id": "etna", "content": "Mount Etna is an active volcano in Sicily.", "metadata": {"source": "v.txt"}},
    {"id": "bread", "content": "Sourdough bread rises with wild yeast.", "metadata": {"source": "b.md"}},
    {"id": "trench", "content": "The Mariana Trench is the deepest part of the ocean.", "metadata": {"source": "o.pdf"}},
]  # fmt: skip


def docs() -> list[Any]:
    return [dict(d) for d in DOCS]


def test_factory_and_protocol(pgvector_url: str) -> None:
    for name in ("pgvector", "PGVectorDB"):
        store = VectorDBFactory.create_vector_db(name, connection_string=pgvector_url)
        assert isinstance(store, PGVectorDB)
        assert isinstance(store, VectorDB)
    assert store.type == "pgvector"
    assert store.embedding_function is not None  # parley's offline default, not a download
    assert store.model_name == "all-MiniLM-L6-v2"


def test_collection_semantics(pgvector_url: str) -> None:
    store = PGVectorDB(connection_string=pgvector_url)
    with pytest.raises(ValueError, match="No collection is specified"):
        store.get_collection()
    with pytest.raises(ValueError, match="does not exist"):
        store.get_collection("missing")
    collection = store.create_collection("test-collection", overwrite=True, get_or_create=True)
    assert isinstance(collection, Collection)
    assert collection.name == "test_collection"  # AutoGen's rule: hyphens become underscores
    assert collection.table_exists()
    assert store.get_collection() is collection  # the new collection is the active one
    store.insert_docs(docs()[:1])
    # get_or_create returns the existing collection with its documents ...
    again = store.create_collection("test-collection", overwrite=False, get_or_create=True)
    assert again.count() == 1
    # ... without it, an existing collection is an error ...
    with pytest.raises(ValueError, match="already exists"):
        store.create_collection("test-collection", overwrite=False, get_or_create=False)
    # ... and overwrite starts it empty.
    assert store.create_collection("test-collection", overwrite=True).count() == 0
    assert store.get_collection("test_collection").name == "test_collection"
    store.delete_collection("test-collection")
    assert not collection.table_exists("test_collection")
    with pytest.raises(ValueError, match="No collection is specified"):
        store.get_collection()
    # A deleted collection can be made again with get_or_create=False.
    assert store.create_collection("test-collection", get_or_create=False).count() == 0


def test_insert_retrieve_nearest_first_with_euclidean_distances(pgvector_url: str) -> None:
    store = PGVectorDB(connection_string=pgvector_url)
    store.create_collection("facts")
    store.insert_docs(docs())
    (hits,) = store.retrieve_docs(["Which volcano is in Sicily?"], n_results=3)
    assert hits[0][0] == {
        "id": "etna",
        "content": DOCS[0]["content"],
        "metadata": {"source": "v.txt"},
    }
    distances = [d for _, d in hits]
    assert distances == sorted(distances)
    # The distance is the Euclidean one between the query's and the document's vectors.
    (query_vector,) = store.embedding_function(["Which volcano is in Sicily?"])
    stored = {d["id"]: d["embedding"] for d in store.get_docs_by_ids(None)}
    for doc, distance in hits:
        expected = Collection.euclidean_distance(list(query_vector), stored[doc["id"]])
        assert math.isclose(distance, expected, rel_tol=1e-4)
    two = store.retrieve_docs(["ocean depth", "baking bread"], n_results=1)
    assert [[doc["id"] for doc, _ in hits] for hits in two] == [["trench"], ["bread"]]
    near = store.retrieve_docs(
        ["Which volcano is in Sicily?"], n_results=3, distance_threshold=distances[0] + 1e-6
    )
    assert [doc["id"] for doc, _ in near[0]] == ["etna"]
    # The collection's own query: other distances, and the embeddings on request.
    collection = store.get_collection("facts")
    (cosine,) = collection.query(["Which volcano is in Sicily?"], distance_type="cosine")
    expected = Collection.cosine_distance(list(query_vector), stored["etna"])
    assert cosine[0][0]["id"] == "etna"
    assert math.isclose(cosine[0][1], expected, rel_tol=1e-4)
    assert "embedding" not in cosine[0][0]
    (with_vectors,) = collection.query(["bread"], n_results=1, include_embedding=True)
    assert len(with_vectors[0][0]["embedding"]) == len(query_vector)


def test_update_delete_and_get_by_ids(pgvector_url: str) -> None:
    store = PGVectorDB(connection_string=pgvector_url)
    store.create_collection("docs")
    store.insert_docs([{"content": "doc1", "id": "1"}, {"content": "doc2", "id": "2"}, {"content": "doc3", "id": "3"}])  # fmt: skip
    collection = store.get_collection("docs")
    assert [d["content"] for d in collection.get(ids=["1", "2"])] == ["doc1", "doc2"]
    store.update_docs([{"content": "doc11", "id": "1"}], "docs")
    assert [d["content"] for d in collection.get(["2", "1"])] == ["doc2", "doc11"]  # ids' order
    store.delete_docs(["1"], "docs")
    assert collection.get(["1"]) == []
    assert [d["id"] for d in store.get_docs_by_ids(["1", "2"], "docs")] == ["2"]
    # No ids, or an empty list (as AutoGen), means every document.
    assert sorted(d["id"] for d in store.get_docs_by_ids(ids=[], collection_name="docs")) == ["2", "3"]  # fmt: skip
    assert sorted(d["id"] for d in store.get_docs_by_ids()) == ["2", "3"]
    only_content = store.get_docs_by_ids(["3"], include=["documents"])
    assert set(only_content[0]) == {"id", "content", "embedding"}  # the vector always, as AutoGen
    first, second = collection.get(limit=1), collection.get(limit=1, offset=1)
    assert len(first) == len(second) == 1
    assert first[0]["id"] != second[0]["id"]
    with pytest.raises(ValueError, match="Unknown fields to include"):
        store.get_docs_by_ids(["3"], include=["secret_column"])


def test_an_existing_id_needs_upsert(pgvector_url: str) -> None:
    store = PGVectorDB(connection_string=pgvector_url)
    store.create_collection("docs")
    store.insert_docs(docs()[:1])
    with pytest.raises(ValueError, match=r"already exist.*upsert=True"):
        store.insert_docs([{"id": "new", "content": "new"}, {"id": "etna", "content": "changed"}])
    assert sorted(d["id"] for d in store.get_docs_by_ids()) == ["etna"]  # nothing was written
    store.insert_docs([{"id": "etna", "content": "changed", "metadata": {"v": 2}}], upsert=True)
    assert store.get_docs_by_ids(["etna"])[0]["content"] == "changed"
    assert store.get_docs_by_ids(["etna"])[0]["metadata"] == {"v": 2}
    with pytest.raises(ValueError, match="content is required"):
        store.insert_docs([{"id": "x"}])
    with pytest.raises(ValueError, match="id is required"):
        store.insert_docs([{"content": "x"}])


def test_a_custom_embedding_function_and_given_embeddings(pgvector_url: str) -> None:
    def three_dims(texts: list[str]) -> list[list[float]]:
        return [[float(len(t)), float(t.count("a")), 1.0] for t in texts]

    store = PGVectorDB(connection_string=pgvector_url, embedding_function=three_dims)
    collection = store.create_collection("small")
    assert collection.dimension == 3
    store.insert_docs(
        [
            {"id": "given", "content": "aaaa", "embedding": [100.0, 0.0, 0.0]},
            {"id": "other", "content": "b", "embedding": [1.0, 0.0, 1.0]},
        ]
    )
    assert store.get_docs_by_ids(["given"])[0]["embedding"] == [100.0, 0.0, 0.0]
    (hits,) = store.retrieve_docs(["b"], n_results=2)  # the query [1, 0, 1]
    assert (hits[0][0]["id"], round(hits[0][1], 6)) == ("other", 0.0)


def test_names_and_values_never_become_sql(pgvector_url: str) -> None:
    store = PGVectorDB(connection_string=pgvector_url)
    store.create_collection("victim")
    store.insert_docs(docs()[:1], "victim")
    hostile = 'x"; DROP TABLE victim; --'
    store.create_collection(hostile)
    store.insert_docs(
        [{"id": "o'clock", "content": "it's '); DROP TABLE victim; --", "metadata": {"q": "it's"}}],
        hostile,
    )
    assert store.get_docs_by_ids(["o'clock"], hostile)[0]["metadata"] == {"q": "it's"}
    assert store.get_collection("victim").count() == 1  # still there
    collection = store.get_collection(hostile)
    assert [d["id"] for d in collection.get(where={"q": "it's"})] == ["o'clock"]
    assert collection.get(where={"q": "other"}) == []
    with pytest.raises(TypeError, match="mapping"):
        collection.get(where="1=1; DROP TABLE victim")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at most 63 bytes"):
        store.create_collection("n" * 64)


def test_the_ways_to_connect(pgvector_url: str, pgvector_server: PostgresServer) -> None:
    import psycopg

    parts = urlsplit(pgvector_url)
    by_parts = PGVectorDB(
        host=parts.hostname,
        port=parts.port,
        dbname=parts.path.lstrip("/"),
        username=parts.username,
        password=parts.password,
    )
    by_parts.create_collection("shared")
    by_parts.insert_docs(docs()[:1])
    by_conninfo = PGVectorDB(connection_string=pgvector_server.conninfo)
    conn = psycopg.connect(pgvector_url, autocommit=True)
    by_conn = PGVectorDB(conn=conn)
    assert by_conn.client is conn
    for store in (by_conninfo, by_conn):
        assert [d["id"] for d in store.get_docs_by_ids(None, "shared")] == ["etna"]
    with pytest.raises(PermissionError, match="needs a connection"):
        PGVectorDB()


def test_a_wrong_password_is_never_shown(
    pgvector_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    import psycopg

    parts = urlsplit(pgvector_url)
    wrong = "Wrong-Secret-4711"
    caplog.set_level(logging.DEBUG)
    with pytest.raises(psycopg.OperationalError) as failure:
        PGVectorDB(
            host=parts.hostname,
            port=parts.port,
            dbname="postgres",
            username=parts.username,
            password=wrong,
            connect_timeout=30,
        )
    assert "password authentication failed" in str(failure.value)
    assert wrong not in str(failure.value)
    assert wrong not in caplog.text
    store = PGVectorDB(connection_string=pgvector_url)
    assert parts.password not in repr(store.client)
    assert parts.password not in repr(vars(store))


def test_retrieve_user_proxy_agent_with_vector_db_pgvector(
    pgvector_url: str, corpus: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add_reply("About 10,935 metres.")
    rag = RetrieveUserProxyAgent(
        "ragproxy",
        human_input_mode="NEVER",
        code_execution_config=False,
        retrieve_config={
            "docs_path": str(corpus),
            "vector_db": "pgvector",
            "db_config": {"connection_string": pgvector_url},
            "collection_name": "rag-docs",
            "chunk_token_size": 40,
            "task": "qa",
        },
    )
    helper = AssistantAgent(
        "assistant", llm_config={"config_list": fake_llm.config_list(), "cache_seed": None}
    )
    result = rag.initiate_chat(
        helper,
        message=rag.message_generator,
        problem="How deep is the Mariana Trench?",
        n_results=2,
    )
    assert result.summary == "About 10,935 metres."
    prompt = str(fake_llm.requests[0]["messages"][-1]["content"])
    assert OCEAN[1] in prompt.split("Context is: ", 1)[1]
    # The chunks are in PostgreSQL, in the table the factory's store made.
    assert PGVectorDB(connection_string=pgvector_url).get_collection("rag-docs").count() > 3


def test_postgres_server_cleans_up_and_hides_its_password() -> None:
    server = PostgresServer().start()
    assert server.password not in repr(server)
    import psycopg

    with psycopg.connect(server.conninfo) as conn:
        data = Path(conn.execute("SHOW data_directory").fetchone()[0])
    assert data.exists()
    server.stop()
    assert not data.parent.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(server.conninfo, connect_timeout=5)


def test_a_missing_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("psycopg", "pgvector.psycopg"):
        with monkeypatch.context() as patched:
            patched.setitem(sys.modules, module, None)
            with pytest.raises(ImportError, match=r"pip install 'parley\[retrieve-pgvector\]'"):
                PGVectorDB(connection_string="postgresql://nobody@127.0.0.1:1/none")


def test_the_vectordb_package_imports_no_driver() -> None:
    import subprocess

    code = (
        "import json, sys\n"
        "from parley.agentchat.contrib.vectordb import VectorDBFactory, PGVectorDB\n"
        "import parley.agentchat.contrib.vectordb.pgvectordb\n"
        "print(json.dumps([m for m in ('psycopg', 'pgvector') if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]"  # psycopg and pgvector load when a store connects
