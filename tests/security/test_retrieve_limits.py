"""RetrieveChat's read limits (issue 34, 8c): a docs URL with an endless or huge body, a .docx
that unpacks to 200 MB of XML, a text whose chunking would take minutes. Each is refused with
an error naming it when given alone, and skipped with a warning that names it among others;
nothing is read whole. The bodies and the zip bomb are generated here, never stored."""

from __future__ import annotations

import http.server
import logging
import re
import threading
import tracemalloc
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parley.exceptions import DocumentRefusedError
from parley.retrieve_utils import (
    DEFAULT_LIMITS,
    ReadLimits,
    get_files_from_dir,
    split_files_to_chunks,
)

from .._loopback_http import serving

_MB = 1024 * 1024
BLOCK = b"x" * (64 * 1024)
# What a server below sends at most (it stops then): more than the default limit, so that a
# client without limits reads it all, and bounded, so that the test ends even then.
SERVER_CAP = DEFAULT_LIMITS.max_bytes + 32 * _MB


class _Sent:
    """Bytes a server handler wrote, across its threads."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()

    def add(self, n: int) -> None:
        with self.lock:
            self.count += n


def _handler(sent: _Sent, declared: int | None, content_type: str = "text/plain") -> Any:
    class Endless(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # the body ends when the connection does

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            if declared is not None:
                self.send_header("Content-Length", str(declared))
            self.end_headers()
            try:
                while sent.count < SERVER_CAP:
                    self.wfile.write(BLOCK)
                    sent.add(len(BLOCK))
            except OSError:
                pass  # the client hung up: what a limited client does

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Endless


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # downloads land in ./tmp/chromadb
    return tmp_path


@pytest.fixture
def endless() -> Iterator[tuple[str, _Sent]]:
    """A server whose body has no length and no end (up to SERVER_CAP)."""
    sent = _Sent()
    with serving(_handler(sent, None)) as url:
        yield f"{url}/docs/page.txt", sent


def test_a_huge_content_length_is_refused_before_the_body_is_read(workdir: Path) -> None:
    sent = _Sent()
    with (
        serving(_handler(sent, 700 * _MB, "text/html")) as url,
        pytest.raises(DocumentRefusedError) as caught,
    ):
        get_files_from_dir(f"{url}/docs/index.html")
    assert caught.value.source == f"{url}/docs/index.html"
    assert "Content-Length" in caught.value.reason
    assert "max_bytes" in caught.value.reason
    assert sent.count < SERVER_CAP
    assert not any((workdir / "tmp" / "chromadb").iterdir())


def test_an_endless_body_is_cut_at_the_limit_in_bounded_memory(
    workdir: Path, endless: tuple[str, _Sent]
) -> None:
    url, sent = endless
    tracemalloc.start()
    try:
        with pytest.raises(DocumentRefusedError, match=r"more than max_bytes=100\.0 MB") as caught:
            get_files_from_dir(url)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.source == url
    assert peak < 16 * _MB  # streamed, never held whole
    assert sent.count < SERVER_CAP
    assert not any((workdir / "tmp" / "chromadb").iterdir())  # no partial file left


def test_among_many_documents_a_refused_download_is_skipped_with_a_warning(
    workdir: Path, endless: tuple[str, _Sent], caplog: pytest.LogCaptureFixture
) -> None:
    url, _ = endless
    good = workdir / "good.txt"
    good.write_text("Volcanoes form where magma reaches the surface.\n" * 3)
    with caplog.at_level(logging.WARNING, logger="parley.retrieve_utils"):
        files = get_files_from_dir([url, str(good)], limits=ReadLimits(max_bytes=2 * _MB))
    assert files == [str(good)]
    assert any(url in m and "max_bytes=2.0 MB" in m for m in caplog.messages)


_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
    'package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.'
    'openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType='
    '"application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.'
    'openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.'
    'org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.'
    'openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/'
    'document.xml"/></Relationships>'
)


def _zip_bomb(path: Path, unpacked: int) -> Path:
    """A valid .docx whose document part is ``unpacked`` bytes of XML paragraphs (deflated to
    well under a MB), written a block at a time."""
    paragraph = b"<w:p><w:r><w:t>" + b"Lava " * 800 + b"</w:t></w:r></w:p>\n"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", _TYPES)
        archive.writestr("_rels/.rels", _RELS)
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            part.write(
                f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{_W}">'.encode()
            )
            part.write(b"<w:body>")
            written = 0
            block = paragraph * 64
            while written < unpacked:
                part.write(block)
                written += len(block)
            part.write(b"</w:body></w:document>")
    return path


def test_a_docx_within_the_limits_is_read(tmp_path: Path) -> None:
    docx = _zip_bomb(tmp_path / "small.docx", 200_000)
    chunks, _ = split_files_to_chunks([str(docx)], max_tokens=500)
    assert chunks
    assert "Lava Lava" in chunks[0]


def test_a_zip_bomb_docx_alone_is_refused_without_unpacking_it(tmp_path: Path) -> None:
    bomb = _zip_bomb(tmp_path / "report.docx", 200 * _MB)
    assert bomb.stat().st_size < _MB
    tracemalloc.start()
    try:
        with pytest.raises(DocumentRefusedError) as caught:
            split_files_to_chunks([str(bomb)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.source == str(bomb)
    assert re.search(r"unpack to 2\d\d\.\d MB, more than max_unpacked_bytes", caught.value.reason)
    assert peak < 16 * _MB


def test_in_a_folder_the_zip_bomb_is_skipped_and_the_rest_indexed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    bomb = _zip_bomb(folder / "report.docx", 8 * _MB)
    (folder / "notes.txt").write_text("Magma rises through the crust.\n\nLava cools to rock.\n")
    files = get_files_from_dir(str(folder), types=["txt", "docx"])
    with caplog.at_level(logging.WARNING, logger="parley.retrieve_utils"):
        chunks, sources = split_files_to_chunks(files, limits=ReadLimits(max_unpacked_bytes=_MB))
    assert chunks
    assert all(s["source"].endswith("notes.txt") for s in sources)
    assert any(str(bomb) in m and "max_unpacked_bytes" in m for m in caplog.messages)


def test_chunking_is_bounded_in_time(tmp_path: Path) -> None:
    # One 4 MB line cut into 20-token chunks: AutoGen's loop recounts the rest of the line
    # after every chunk, minutes of work.
    text = tmp_path / "one-line.txt"
    text.write_text("lava " * (800 * 1024))
    with pytest.raises(DocumentRefusedError, match="max_seconds=1") as caught:
        split_files_to_chunks([str(text)], max_tokens=20, limits=ReadLimits(max_seconds=1))
    assert caught.value.source == str(text)


def test_the_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="max_bytes must be a positive number"):
        ReadLimits(max_bytes=0)
    with pytest.raises(ValueError, match="max_seconds must be a positive number"):
        ReadLimits(max_seconds=float("nan"))


def test_retrieve_chat_takes_its_limits_from_retrieve_config(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from parley.agentchat.contrib.retrieve_user_proxy_agent import RetrieveUserProxyAgent
    from parley.agentchat.contrib.vectordb import ChromaVectorDB

    folder = tmp_path / "docs"
    folder.mkdir()
    big = folder / "big.txt"
    big.write_text("Basalt is a volcanic rock.\n" * 100_000)  # 2.7 MB
    (folder / "small.txt").write_text("Pumice floats on water.\n\nObsidian is glass.\n")

    store = ChromaVectorDB(path=str(tmp_path / "db"))

    def proxy(docs: Any, name: str, **limits: Any) -> RetrieveUserProxyAgent:
        config = {"docs_path": docs, "vector_db": store, "collection_name": name, **limits}
        return RetrieveUserProxyAgent("rag", retrieve_config=config, code_execution_config=False)

    try:
        with pytest.raises(DocumentRefusedError, match="max_doc_bytes"):
            proxy(str(big), "alone", max_doc_bytes=_MB).retrieve_docs("rock", n_results=1)
        with caplog.at_level(logging.WARNING, logger="parley.retrieve_utils"):
            proxy(str(folder), "many", max_doc_bytes=_MB).retrieve_docs("float", n_results=1)
        assert any(str(big) in m and "max_doc_bytes" in m for m in caplog.messages)
        stored = store.get_docs_by_ids(collection_name="many")
        assert stored
        assert {d["metadata"]["source"] for d in stored} == {str(folder / "small.txt")}
    finally:
        close = getattr(store.client, "close", None)
        if callable(close):
            close()
