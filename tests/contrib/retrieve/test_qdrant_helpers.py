"""AutoGen's ``create_qdrant_from_dir`` and ``query_qdrant`` over qdrant-client's in-process mode
(``QdrantClient(":memory:")``): a corpus indexed from a directory, found again by meaning, filtered
by a word, extended with ``extra_docs``. No server, nothing downloaded."""

from __future__ import annotations

from pathlib import Path

import pytest

qdrant_client = pytest.importorskip("qdrant_client")

from parley.agentchat.contrib.qdrant_retrieve_user_proxy_agent import (  # noqa: E402
    create_qdrant_from_dir,
    query_qdrant,
)


def test_index_a_directory_and_search_it(corpus: Path) -> None:
    client = qdrant_client.QdrantClient(":memory:")
    create_qdrant_from_dir(str(corpus), client=client, max_tokens=40)
    assert client.get_collection("all-my-documents")  # AutoGen's default name
    stored = client.count("all-my-documents", exact=True).count
    assert stored >= 5  # every document of the corpus, one chunk at least

    found = query_qdrant(["Which volcano erupts in Sicily?"], n_results=2, client=client)
    assert set(found) == {"ids", "documents", "distances", "metadatas"}
    assert len(found["ids"]) == 1  # one list per query
    assert len(found["ids"][0]) == 2
    assert "Etna" in found["documents"][0][0]
    assert found["metadatas"][0][0]["source"].endswith("volcano.txt")
    # Scores, as AutoGen returned them: the nearest first, the highest.
    scores = found["distances"][0]
    assert scores == sorted(scores, reverse=True)
    assert all(isinstance(i, int) and 0 <= i < stored for i in found["ids"][0])


def test_search_string_keeps_only_chunks_containing_it(corpus: Path) -> None:
    client = qdrant_client.QdrantClient(":memory:")
    create_qdrant_from_dir(str(corpus), client=client, collection_name="docs", max_tokens=40)
    everything = query_qdrant(["bread"], n_results=50, client=client, collection_name="docs")
    assert any("Sourdough" not in doc for doc in everything["documents"][0])
    found = query_qdrant(
        ["bread"], n_results=50, client=client, collection_name="docs", search_string="starter"
    )
    assert found["documents"][0]
    assert all("starter" in doc for doc in found["documents"][0])


def test_several_queries_and_a_custom_split(corpus: Path) -> None:
    client = qdrant_client.QdrantClient(":memory:")

    def by_line(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.strip()]

    create_qdrant_from_dir(
        str(corpus / "geology"), client=client, custom_text_split_function=by_line
    )
    assert client.count("all-my-documents", exact=True).count == 3  # three lines of text
    found = query_qdrant(["how tall is it", "lava flows"], n_results=1, client=client)
    assert len(found["documents"]) == 2
    assert "metres" in found["documents"][0][0]
    assert "lava" in found["documents"][1][0]


def test_extra_docs_adds_after_the_existing_ones(corpus: Path) -> None:
    client = qdrant_client.QdrantClient(":memory:")
    create_qdrant_from_dir(str(corpus / "bread.md"), client=client, max_tokens=200)
    first = client.count("all-my-documents", exact=True).count
    create_qdrant_from_dir(str(corpus / "geology"), client=client, max_tokens=200, extra_docs=True)
    total = client.count("all-my-documents", exact=True).count
    assert total > first
    ids = query_qdrant(["anything"], n_results=total, client=client)["ids"][0]
    assert sorted(ids) == list(range(total))  # nothing overwritten
    # Without extra_docs the ids start at 0 again: the same chunks are replaced, not added.
    create_qdrant_from_dir(str(corpus / "bread.md"), client=client, max_tokens=200)
    assert client.count("all-my-documents", exact=True).count == total


def test_payload_indexing_creates_a_text_index(corpus: Path) -> None:
    client = qdrant_client.QdrantClient(":memory:")
    # The in-process mode says it does not use payload indexes; the call is still made.
    with pytest.warns(UserWarning, match="Payload indexes"):
        create_qdrant_from_dir(str(corpus / "bread.md"), client=client, payload_indexing=True)
    found = query_qdrant(["bread"], client=client, search_string="flour")
    assert found["documents"][0]
    assert all("flour" in doc for doc in found["documents"][0])
