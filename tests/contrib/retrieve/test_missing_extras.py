"""Without an optional package, the error names the pip command that installs it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from parley import retrieve_utils
from parley.agentchat.contrib.vectordb import ChromaVectorDB, QdrantVectorDB, VectorDBFactory

from ._corpus import minimal_pdf


@pytest.mark.parametrize(
    ("module", "make", "extra"),
    [
        ("chromadb", lambda: ChromaVectorDB(path=None), "retrieve"),
        ("qdrant_client", lambda: QdrantVectorDB(), "retrieve-qdrant"),
        ("chromadb", lambda: VectorDBFactory.create_vector_db("chroma"), "retrieve"),
    ],
)
def test_a_missing_store_package_names_its_extra(
    module: str, make: object, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # what `import` sees when it is not installed
    with pytest.raises(ImportError, match=rf"pip install 'parley\[{extra}\]'"):
        make()  # type: ignore[operator]


def test_a_missing_reader_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(minimal_pdf(["some text here"]))
    monkeypatch.setitem(sys.modules, "pypdf", None)
    with pytest.raises(
        ImportError, match=r"pypdf is needed to read this file: pip install 'parley\[retrieve\]'"
    ):
        retrieve_utils.split_files_to_chunks([str(pdf)])


def test_a_missing_embedding_model_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from parley.memory import embedding

    monkeypatch.setattr(embedding, "_loaded", {})
    monkeypatch.setitem(sys.modules, "wordllama", None)
    with pytest.raises(ImportError, match=r"pip install 'parley\[retrieve\]'"):
        QdrantVectorDB()
    # A store given an embedding function of its own does not need the model.
    assert QdrantVectorDB(embedding_function=lambda texts: [[1.0] for _ in texts]).type == "qdrant"
