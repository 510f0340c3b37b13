"""Fixtures of the RetrieveChat tests: the written corpus, and the optional packages they need."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._corpus import write_corpus


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path)


@pytest.fixture(autouse=True)
def _close_store_clients(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Close every Chroma and Qdrant client a test made (through parley or directly): a client
    keeps its database and index files open until closed, and a suite that leaks them runs out
    of the descriptors ``select()`` can watch (1024) in later tests."""
    made: list[Any] = []

    def recorded(factory: Any) -> Any:
        def make(*args: Any, **kwargs: Any) -> Any:
            client = factory(*args, **kwargs)
            made.append(client)
            return client

        return make

    for module_name, names in (
        ("chromadb", ("PersistentClient", "EphemeralClient", "Client")),
        ("qdrant_client", ("QdrantClient",)),
    ):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name in names:
            monkeypatch.setattr(module, name, recorded(getattr(module, name)))
    yield
    for client in reversed(made):
        close = getattr(client, "close", None)
        if callable(close):
            close()


@pytest.fixture(scope="session")
def pgvector_server() -> Iterator[Any]:
    """A PostgreSQL server with pgvector's extension on loopback for the whole session (run as
    the ``postgres`` account when the tests run as root), stopped and removed at the end."""
    from parley.testing.postgres import PostgresServer, PostgresUnavailableError

    try:
        server = PostgresServer(extensions=("vector",)).start()
    except PostgresUnavailableError as e:
        pytest.fail(f"{e}\n(run scripts/install-system-deps.sh)", pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pgvector_url(
    pgvector_server: Any, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """The URL of the session's PostgreSQL, with no tables; the test's connections are closed
    afterwards (each ``psycopg.connect`` it made, through parley or directly)."""
    if request.node.get_closest_marker("pgvector") is None:
        pytest.fail("tests using pgvector_url must be marked @pytest.mark.pgvector", pytrace=False)
    import psycopg
    from psycopg import sql

    with psycopg.connect(pgvector_server.conninfo, autocommit=True) as admin:
        tables = admin.execute(
            "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = 'public'"
        ).fetchall()
        for (table,) in tables:
            admin.execute(sql.SQL("DROP TABLE {} CASCADE").format(sql.Identifier(table)))
    made: list[Any] = []
    original = psycopg.connect

    def recorded(*args: Any, **kwargs: Any) -> Any:
        connection = original(*args, **kwargs)
        made.append(connection)
        return connection

    monkeypatch.setattr(psycopg, "connect", recorded)
    yield pgvector_server.url
    for connection in made:
        connection.close()
