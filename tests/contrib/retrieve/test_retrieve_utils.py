"""parley.retrieve_utils: finding files, reading each format, chunking, downloading on loopback."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parley import retrieve_utils as ru
from parley.token_count_utils import count_token

from ..._loopback_http import QuietHandler, serving
from ._corpus import BREAD, GARDEN, OCEAN, VOLCANO_MORE, minimal_pdf

SPEC_TEXT = "para one line a\npara one line b\n\npara two line a\npara two line b\n\npara three"


def test_text_formats_are_autogens_plus_word_files() -> None:
    assert ru.TEXT_FORMATS[:15] == [
        "txt", "json", "csv", "tsv", "md", "html", "htm", "rtf", "rst", "jsonl", "log", "xml",
        "yaml", "yml", "pdf",
    ]  # fmt: skip
    assert "docx" in ru.TEXT_FORMATS  # python-docx is in the retrieve extra
    assert frozenset({"one_line", "multi_lines"}) == ru.VALID_CHUNK_MODES


def test_split_text_examples() -> None:
    assert ru.split_text_to_chunks(SPEC_TEXT, 12) == [
        "para one line a\npara one line b",
        "para two line a\npara two line b\n\npara three",
    ]
    assert ru.split_text_to_chunks(SPEC_TEXT, 12, must_break_at_empty_line=False)[0] == (
        "para one line a\npara one line b\n"
    )
    assert ru.split_text_to_chunks(SPEC_TEXT, 12, "one_line") == [
        "para one line a",
        "para one line b",
        "para two line a\npara two line b\n\npara three",
    ]
    assert ru.split_text_to_chunks("hi") == []
    assert ru.split_text_to_chunks("   hello   ") == ["hello"]
    with pytest.raises(AssertionError):
        ru.split_text_to_chunks(SPEC_TEXT, chunk_mode="pages")


def test_a_line_longer_than_the_limit_is_cut_within() -> None:
    line = " ".join(f"word{i}" for i in range(200))
    chunks = ru.split_text_to_chunks(line, 20, must_break_at_empty_line=False)
    assert len(chunks) > 5
    assert all(count_token(c) <= 20 for c in chunks)
    assert "".join(chunks).split() == line.split()


def line_tokens(chunk: str) -> int:
    """A chunk's size as AutoGen (and parley) measure it: its lines' tokens, newlines left out."""
    return sum(count_token(line) for line in chunk.split("\n"))


def test_autogens_overlap_example() -> None:
    # 25 one-letter lines, at most 10 tokens a chunk, 3 lines of overlap: AutoGen's chunks.
    letters = "\n".join(chr(c) for c in range(ord("A"), ord("Z")))
    assert ru.split_text_to_chunks(letters, max_tokens=10, overlap=3) == [
        "A\nB\nC\nD\nE\nF\nG\nH\nI",
        "G\nH\nI\nJ\nK\nL\nM\nN\nO",
        "M\nN\nO\nP\nQ\nR\nS\nT\nU",
        "S\nT\nU\nV\nW\nX\nY",
    ]
    assert ru.split_text_to_chunks(letters, max_tokens=10) == [
        "A\nB\nC\nD\nE\nF\nG\nH\nI",
        "J\nK\nL\nM\nN\nO\nP\nQ\nR",
        "S\nT\nU\nV\nW\nX\nY",
    ]
    assert all(line_tokens(c) <= 10 for c in ru.split_text_to_chunks(letters, max_tokens=10))
    # One long line is cut within, each piece under the limit even counted whole.
    assert all(count_token(c) <= 1000 for c in ru.split_text_to_chunks("A" * 10000, 1000))


def test_overlap_repeats_lines() -> None:
    text = "\n".join(f"line number {i} is here" for i in range(30))
    chunks = ru.split_text_to_chunks(text, 30, must_break_at_empty_line=False, overlap=1)
    for first, second in itertools.pairwise(chunks):
        assert first.split("\n")[-1] == second.split("\n")[0]


_words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=5, max_size=12)
_lines = st.lists(_words, min_size=1, max_size=6).map(" ".join)
_texts = st.lists(st.one_of(_lines, st.just("")), min_size=1, max_size=40).map("\n".join)


@settings(max_examples=60, deadline=None)
@given(
    text=_texts,
    max_tokens=st.integers(min_value=30, max_value=300),
    mode=st.sampled_from(["multi_lines", "one_line"]),
    blank=st.booleans(),
)
def test_chunks_fit_the_limit_and_lose_no_text(
    text: str, max_tokens: int, mode: str, blank: bool
) -> None:
    chunks = ru.split_text_to_chunks(text, max_tokens, mode, blank)
    assert all(line_tokens(c) <= max_tokens for c in chunks)
    # Every line holds at least 5 characters, and fits the limit: nothing is dropped, nothing
    # is repeated without overlap, the order is kept.
    assert " ".join(chunks).split() == text.split()


@settings(max_examples=30, deadline=None)
@given(
    words=st.lists(_words, min_size=30, max_size=300),
    max_tokens=st.integers(min_value=8, max_value=60),
)
def test_long_lines_are_cut_under_the_limit(words: list[str], max_tokens: int) -> None:
    line = " ".join(words)
    chunks = ru.split_text_to_chunks(line, max_tokens, "multi_lines", False)
    assert all(count_token(c) <= max_tokens for c in chunks)
    kept, whole = "".join("".join(chunks).split()), "".join(words)
    # Nothing is lost but, as AutoGen's rule has it, a last piece of the line shorter than
    # RAG_MINIMUM_MESSAGE_LENGTH characters (a chunk too short to be worth retrieving).
    assert whole.startswith(kept)
    assert len(whole) - len(kept) < ru.RAG_MINIMUM_MESSAGE_LENGTH


def test_get_files_from_dir(corpus: Path) -> None:
    found = ru.get_files_from_dir(str(corpus))
    assert sorted(Path(f).name for f in found) == [
        "bread.md", "garden.docx", "ocean.pdf", "trains.html", "volcano.txt",
    ]  # fmt: skip
    top_only = ru.get_files_from_dir(str(corpus), recursive=False)
    assert "volcano.txt" not in {Path(f).name for f in top_only}
    assert ru.get_files_from_dir(str(corpus), types=[".MD"]) == [str(corpus / "bread.md")]
    (corpus / "SHOUT.PDF").write_bytes(minimal_pdf(["upper case extension"]))
    (corpus / "mixed.Txt").write_text("mixed case extension is not found")
    names = {Path(f).name for f in ru.get_files_from_dir(str(corpus))}
    assert "SHOUT.PDF" in names
    assert "mixed.Txt" not in names
    one = str(corpus / "bread.md")
    assert ru.get_files_from_dir(one) == [one]
    listed = ru.get_files_from_dir([one, str(corpus / "geology"), str(corpus / "nope.txt")])
    assert listed == [one, str(corpus / "geology" / "volcano.txt")]
    with pytest.raises(ValueError, match="types cannot be empty"):
        ru.get_files_from_dir(str(corpus), types=[])
    with pytest.raises(ValueError, match="does not exist"):
        ru.get_files_from_dir(str(corpus / "missing"))


def test_every_format_is_read_as_text(corpus: Path) -> None:
    chunks, sources = ru.split_files_to_chunks(ru.get_files_from_dir(str(corpus)), 200)
    by_source = {Path(s["source"]).name: c for c, s in zip(chunks, sources, strict=False)}
    assert by_source["ocean.pdf"].split() == " ".join(OCEAN).split()
    assert by_source["garden.docx"] == "\n".join(GARDEN)
    assert by_source["bread.md"] == "\n".join(BREAD)
    trains = by_source["trains.html"]
    # AutoGen's Markdown: the title as a heading, then the page (title again, h1 underlined)
    assert trains.startswith("# Bullet trains\n\nBullet trains\n\nShinkansen\n==========")
    assert "<p>" not in trains
    assert "var x" not in trains  # scripts are dropped
    assert "320 km/h" in trains


def test_custom_split_function_replaces_chunking(corpus: Path) -> None:
    chunks, sources = ru.split_files_to_chunks(
        [str(corpus / "bread.md")], custom_text_split_function=lambda t: t.split("\n\n")
    )
    assert chunks == ["# Sourdough bread", "\n".join(BREAD[2:]) + "\n"]
    assert sources == [{"source": str(corpus / "bread.md")}] * 2


def test_empty_and_encrypted_pdfs_give_no_text(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(minimal_pdf([]))
    assert ru.extract_text_from_pdf(str(empty)) == ""
    assert ru.split_files_to_chunks([str(empty)]) == ([], [])


def test_is_url() -> None:
    assert ru.is_url("https://example.com/page.html")
    assert not ru.is_url("file:///etc/hosts")
    assert not ru.is_url("docs/readme.md")


class _Pages(QuietHandler):
    def do_GET(self) -> None:
        if self.path == "/page.html":
            body, kind = (
                b"<html><head><title>Local page</title></head><body><p>Served on loopback.</p></body></html>",
                "text/html; charset=utf-8",
            )
        elif self.path == "/notes.txt":
            body, kind = b"plain notes from the server", "text/plain"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def local_site() -> Iterator[str]:
    with serving(_Pages) as url:
        yield url


def test_urls_are_downloaded_html_as_markdown(
    local_site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # downloads go to tmp/chromadb under the working directory
    page, notes = f"{local_site}/page.html", f"{local_site}/notes.txt"
    files = ru.get_files_from_dir([page, notes, f"{local_site}/missing"])
    assert [url for _, url in files] == [page, notes]
    saved = Path(files[0][0])
    assert saved.parent == Path("tmp", "chromadb")
    assert saved.name.startswith("127.0.0.1:")
    assert "_page.html_" in saved.name
    # AutoGen's Markdown: the title as a heading, then the whole page (its title again).
    assert saved.read_text() == "# Local page\n\nLocal page\n\nServed on loopback."
    chunks, sources = ru.split_files_to_chunks(files)
    assert chunks == [
        "# Local page\n\nLocal page\n\nServed on loopback.",
        "plain notes from the server",
    ]
    assert sources == [{"source": page}, {"source": notes}]


def test_create_and_query_a_chroma_database_from_a_directory(
    corpus: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = str(tmp_path / "chroma")
    ru.create_vector_db_from_dir(str(corpus), max_tokens=40, db_path=db)
    ru.create_vector_db_from_dir(str(corpus), max_tokens=40, db_path=db)  # exists: only logged
    assert "Collection all-my-documents already exists." in caplog.text
    found = ru.query_vector_db(["How deep is the ocean trench?"], n_results=2, db_path=db)
    assert found["ids"][0][0].startswith("doc_")
    assert found["documents"][0][0] == "\n".join(OCEAN)
    only = ru.query_vector_db(["volcano"], n_results=5, db_path=db, search_string="Caucasus")
    assert only["documents"] == [["\n".join(VOLCANO_MORE)]]
    # extra_docs: new ids continue after the stored ones.
    more = tmp_path / "more"
    more.mkdir()
    (more / "saturn.txt").write_text("Saturn has rings made of ice and rock.\n")
    ru.create_vector_db_from_dir(str(more), db_path=db, get_or_create=True, extra_docs=True)
    found = ru.query_vector_db(["planet rings"], n_results=1, db_path=db)
    assert found["ids"] == [["doc_7"]]


def test_get_file_from_url_saves_where_told(
    local_site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    notes = f"{local_site}/notes.txt"
    # A save_path that is not a directory is the file to write, its folders made (AutoGen).
    saved, url = ru.get_file_from_url(notes, save_path=str(tmp_path / "out" / "n.txt")) or ("", "")
    assert (saved, url) == (str(tmp_path / "out" / "n.txt"), notes)
    assert Path(saved).read_text() == "plain notes from the server"
    # An existing directory gets a file named from the URL inside it.
    folder = tmp_path / "downloads"
    folder.mkdir()
    found = ru.get_file_from_url(notes, save_path=str(folder))
    assert found is not None
    assert Path(found[0]).parent == folder
    assert Path(found[0]).name.startswith("127.0.0.1:")
    assert "_notes.txt_" in Path(found[0]).name
    # A page the server does not have: None, nothing written.
    assert ru.get_file_from_url(f"{local_site}/missing", save_path=str(folder)) is None
    assert len(list(folder.iterdir())) == 1


def test_get_files_from_dir_downloads_urls_whatever_the_types(
    local_site: str, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # AutoGen's example: two files, a folder that does not exist, a URL; types only filter
    # what is found in folders.
    monkeypatch.chdir(tmp_path)
    files = ru.get_files_from_dir(
        [
            str(corpus / "bread.md"),
            str(corpus / "geology" / "volcano.txt"),
            str(tmp_path / "no-such-folder"),
            f"{local_site}/page.html",
        ],
        types=["pdf", "txt"],
    )
    assert len(files) == 3
    assert all(Path(f if isinstance(f, str) else f[0]).is_file() for f in files)


def test_parse_html_to_markdown_autogens_example() -> None:
    html = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
            <meta charset="UTF-8">
            <title>Simple HTML Example</title>
            <style>p { color: red; }</style>
        </head>
        <body>
            <h1>Hello, World!</h1>
            <script>var hidden = 1;</script>
            <p>This is a very simple HTML example.</p>
        </body>
        </html>
    """
    assert ru.parse_html_to_markdown(html) == (
        "# Simple HTML Example\n\nSimple HTML Example\n\nHello, World!\n=============\n\n"
        "This is a very simple HTML example."
    )
    # Without a title there is no heading (AutoGen raised TypeError).
    assert ru.parse_html_to_markdown("<p>just text</p>") == "just text"
