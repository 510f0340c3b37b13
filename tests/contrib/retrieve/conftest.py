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
