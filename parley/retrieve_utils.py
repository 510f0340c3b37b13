"""Documents to chunks to a vector database: RetrieveChat's helpers (AutoGen's ``autogen.retrieve_utils``).

``get_files_from_dir`` finds the documents (files, directories, URLs), ``split_files_to_chunks``
reads them (text, Markdown, HTML as Markdown, PDF, Word) and cuts them into chunks of at most
``max_tokens`` tokens at line (or blank-line) boundaries, and ``create_vector_db_from_dir`` /
``query_vector_db`` are the old, Chroma-only way of storing and searching them (the agents now
use :mod:`parley.agentchat.contrib.vectordb`). Tokens are counted offline with
:mod:`parley.token_count_utils`; embeddings default to parley's bundled WordLlama model, so
nothing is downloaded. Needs ``pip install 'parley[retrieve]'`` for the readers and Chroma.
"""

from __future__ import annotations

import glob
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

from ._retrieve_embed import as_chroma_embedding, default_embedding, import_chromadb
from ._retrieve_embed import offline_settings as _offline_settings
from ._retrieve_limits import (
    DEFAULT_LIMITS,
    Deadline,
    ReadLimits,
    limits_from_config,
    refuse_or_skip,
)
from ._retrieve_readers import (
    HAS_DOCX,
    HAS_UNSTRUCTURED,
    extract_text_from_docx,
    extract_text_from_pdf,
    get_file_from_url,
    is_url,
    parse_html_to_markdown,
    read_text,
)
from .exceptions import DocumentRefusedError
from .token_count_utils import count_token

__all__ = [
    "DEFAULT_LIMITS",
    "HAS_UNSTRUCTURED",
    "RAG_MINIMUM_MESSAGE_LENGTH",
    "TEXT_FORMATS",
    "UNSTRUCTURED_FORMATS",
    "VALID_CHUNK_MODES",
    "ReadLimits",
    "create_vector_db_from_dir",
    "extract_text_from_docx",
    "extract_text_from_pdf",
    "get_file_from_url",
    "get_files_from_dir",
    "is_url",
    "limits_from_config",
    "parse_html_to_markdown",
    "query_vector_db",
    "split_files_to_chunks",
    "split_text_to_chunks",
]

logger = logging.getLogger(__name__)

TEXT_FORMATS = [
    "txt", "json", "csv", "tsv", "md", "html", "htm", "rtf", "rst", "jsonl", "log", "xml",
    "yaml", "yml", "pdf",
]  # fmt: skip
UNSTRUCTURED_FORMATS = [
    "doc", "docx", "epub", "msg", "odt", "org", "pdf", "ppt", "pptx", "rtf", "rst", "xlsx",
]  # fmt: skip
if HAS_UNSTRUCTURED:
    TEXT_FORMATS = list(dict.fromkeys(TEXT_FORMATS + UNSTRUCTURED_FORMATS))
elif HAS_DOCX:
    # Word files are read with python-docx when unstructured is absent (parley's `retrieve`
    # extra installs it); AutoGen searched for them only with unstructured.
    TEXT_FORMATS = [*TEXT_FORMATS, "docx"]
VALID_CHUNK_MODES = frozenset({"one_line", "multi_lines"})
RAG_MINIMUM_MESSAGE_LENGTH = int(os.environ.get("RAG_MINIMUM_MESSAGE_LENGTH", 5))
_CHROMA_MAX_BATCH = 40000
_DEFAULT_COLLECTION_METADATA = {"hnsw:space": "ip", "hnsw:construction_ef": 30, "hnsw:M": 32}


def split_text_to_chunks(
    text: str,
    max_tokens: int = 4000,
    chunk_mode: str = "multi_lines",
    must_break_at_empty_line: bool = True,
    overlap: int = 0,
    *,
    deadline: Deadline | None = None,
) -> list[str]:
    """Cut ``text`` into chunks of at most ``max_tokens`` tokens, counted as AutoGen counted
    them: the sum of the tokens of a chunk's lines, the newlines between them left out.

    ``multi_lines`` puts as many whole lines in a chunk as fit (ending a chunk only at a blank
    line when ``must_break_at_empty_line``, if that is possible), ``one_line`` one line per
    chunk; a line longer than ``max_tokens`` is cut within. ``overlap`` lines are repeated at
    the start of the next chunk. Chunks shorter than ``RAG_MINIMUM_MESSAGE_LENGTH`` characters
    are dropped. ``deadline`` (of :mod:`parley.retrieve_utils`'s readers) bounds the time it
    takes: DocumentRefusedError once it has passed.
    """
    check = deadline.check if deadline is not None else _no_deadline
    if chunk_mode not in VALID_CHUNK_MODES:
        raise AssertionError
    if chunk_mode == "one_line":
        must_break_at_empty_line, overlap = False, 0
    chunks: list[str] = []
    lines = text.split("\n")
    if len(lines) < 3 and must_break_at_empty_line:
        logger.warning(
            "The input text has less than 3 lines. Set `must_break_at_empty_line` to `False`"
        )
        must_break_at_empty_line = False
    tokens = []
    for i, line in enumerate(lines):
        if i % 1024 == 0:
            check()
        tokens.append(count_token(line))
    total = sum(tokens)
    # As in AutoGen, a chunk's size is the sum of its lines' tokens: the newlines joining them
    # are not counted (so "A\nB\nC" is 3 tokens, and chunks are cut where AutoGen cut them).
    while total > max_tokens:
        check()
        if chunk_mode == "one_line":
            estimate = 2
        else:
            estimate = min(max(int(max_tokens / max(total, 1) * len(lines)), 2), len(lines))
        cut, chunk = 0, ""
        for cnt in range(estimate - 1, 0, -1):
            if must_break_at_empty_line and lines[cnt].strip():
                continue
            if sum(tokens[:cnt]) <= max_tokens:
                cut, chunk = cnt, "\n".join(lines[:cnt])
                break
        if cut == 0:
            if must_break_at_empty_line:
                logger.warning(
                    "Failed to split docs with must_break_at_empty_line being True, set to False."
                )
                must_break_at_empty_line = False
                continue
            logger.warning(
                "max_tokens is too small to fit a single line of text. Breaking this line:\n\t%s ...",
                lines[0][:100],
            )
            chunk = _fitting_prefix(lines[0], tokens[0], max_tokens)
            lines[0] = lines[0][len(chunk) :]
            tokens[0] = count_token(lines[0])
        if len(chunk) >= RAG_MINIMUM_MESSAGE_LENGTH:
            chunks.append(chunk)
        keep_from = cut - overlap if cut > overlap else cut
        lines, tokens = lines[keep_from:], tokens[keep_from:]
        total = sum(tokens)
    rest = "\n".join(lines).strip()
    if len(rest) >= RAG_MINIMUM_MESSAGE_LENGTH:
        chunks.append(rest)
    return chunks


def _no_deadline() -> None:
    pass


def _fitting_prefix(line: str, line_tokens: int, max_tokens: int) -> str:
    """The longest prefix of ``line`` (cut after a space when one is near) within ``max_tokens``,
    starting from the estimate of its characters per token; at least one character."""
    length = max(int(len(line) * max_tokens / line_tokens * 0.9), 1)
    while length > 1 and count_token(line[:length]) > max_tokens:
        length = max(int(length * 0.9), 1)
    space = line.rfind(" ", 0, length)
    if space > length // 2:
        length = space + 1
    return line[:length]


def split_files_to_chunks(
    files: Sequence[str | tuple[str, str]],
    max_tokens: int = 4000,
    chunk_mode: str = "multi_lines",
    must_break_at_empty_line: bool = True,
    custom_text_split_function: Callable[[str], list[str]] | None = None,
    *,
    limits: ReadLimits | None = None,
) -> tuple[list[str], list[dict[str, Any]]]:
    """Read each file (a path, or ``(saved path, url)`` as downloads are) and cut it into
    chunks; returns the chunks and, for each, ``{"source": url or path}``.

    A file over ``limits`` (default :data:`DEFAULT_LIMITS`: its size, what a zip-based format
    or a PDF unpacks to, the time reading and chunking it takes) is skipped with a warning that
    names it, or, when it is the only file, refused with DocumentRefusedError."""
    limits = DEFAULT_LIMITS if limits is None else limits
    chunks: list[str] = []
    sources: list[dict[str, Any]] = []
    for item in files:
        path, source = item if isinstance(item, tuple) else (item, item)
        deadline = Deadline(source, limits)
        try:
            text = read_text(path, limits=limits, deadline=deadline)
            deadline.check()
            if not text.strip():
                logger.warning("No text available in file: %s", path)
                continue
            if custom_text_split_function is not None:
                pieces = list(custom_text_split_function(text))
            else:
                pieces = split_text_to_chunks(
                    text, max_tokens, chunk_mode, must_break_at_empty_line, deadline=deadline
                )
            deadline.check()
        except DocumentRefusedError as error:
            if error.source != source:  # a reader names the saved copy of a download
                error = DocumentRefusedError(source, error.reason)
            refuse_or_skip(error, alone=len(files) == 1)
            continue
        chunks.extend(pieces)
        sources.extend({"source": source} for _ in pieces)
    return chunks, sources


def _download(url: str, limits: ReadLimits, alone: bool) -> tuple[str, str] | None:
    try:
        return get_file_from_url(url, limits=limits)
    except DocumentRefusedError as error:
        refuse_or_skip(error, alone)
        return None


def get_files_from_dir(
    dir_path: str | list[str],
    types: list[str] = TEXT_FORMATS,
    recursive: bool = True,
    *,
    limits: ReadLimits | None = None,
) -> list[Any]:
    """The files to index: a file as is, a URL downloaded (as ``(saved path, url)``), a
    directory searched for the extensions in ``types``, a list item by item.

    A download over ``limits`` is refused with DocumentRefusedError when the URL is all that was
    given, else skipped with a warning that names it."""
    limits = DEFAULT_LIMITS if limits is None else limits
    if len(types) == 0:
        raise ValueError("types cannot be empty.")
    extensions = [t.lstrip(".").lower() for t in types]
    extensions += [t.upper() for t in extensions]
    if isinstance(dir_path, list):
        files: list[Any] = []
        for item in dir_path:
            if os.path.isfile(item):
                files.append(item)
            elif is_url(item):
                downloaded = _download(item, limits, alone=len(dir_path) == 1)
                if downloaded:
                    files.append(downloaded)
            elif os.path.exists(item):
                try:
                    files.extend(get_files_from_dir(item, types, recursive, limits=limits))
                except ValueError:
                    logger.warning("Directory %s does not exist. Skipping.", item)
            else:
                logger.warning("File %s does not exist. Skipping.", item)
        return files
    if os.path.isfile(dir_path):
        return [dir_path]
    if is_url(dir_path):
        downloaded = _download(dir_path, limits, alone=True)
        return [downloaded] if downloaded else []
    if not os.path.exists(dir_path):
        logger.error("Directory %s does not exist.", dir_path)
        raise ValueError(f"Directory {dir_path} does not exist.")
    files = []
    for extension in extensions:
        pattern = (
            os.path.join(dir_path, "**", f"*.{extension}")
            if recursive
            else os.path.join(dir_path, f"*.{extension}")
        )
        files.extend(sorted(glob.glob(pattern, recursive=recursive)))
    return files


def _chroma_client(client: Any, db_path: str) -> Any:
    if client is not None:
        return client
    chromadb = import_chromadb()
    return chromadb.PersistentClient(path=db_path, settings=_offline_settings(chromadb))


def _chroma_embedding(embedding_function: Any, embedding_model: str) -> Any:
    # AutoGen builds a sentence-transformers model named by `embedding_model`, downloaded on
    # first use; parley's default is the bundled model, so the name is not used.
    del embedding_model
    return as_chroma_embedding(
        embedding_function if embedding_function is not None else default_embedding()
    )


def create_vector_db_from_dir(
    dir_path: str | list[str],
    max_tokens: int = 4000,
    client: Any = None,
    db_path: str = "tmp/chromadb.db",
    collection_name: str = "all-my-documents",
    get_or_create: bool = False,
    chunk_mode: str = "multi_lines",
    must_break_at_empty_line: bool = True,
    embedding_model: str = "all-MiniLM-L6-v2",
    embedding_function: Any = None,
    custom_text_split_function: Callable[[str], list[str]] | None = None,
    custom_text_types: list[str] = TEXT_FORMATS,
    recursive: bool = True,
    extra_docs: bool = False,
    *,
    limits: ReadLimits | None = None,
) -> Any:
    """Chunk the documents under ``dir_path`` into a Chroma collection (ids ``doc_<n>``);
    returns the Chroma client. A collection that exists without ``get_or_create`` is only
    logged."""
    client = _chroma_client(client, db_path)
    try:
        if get_or_create:
            collection = client.get_or_create_collection(
                collection_name,
                embedding_function=_chroma_embedding(embedding_function, embedding_model),
                metadata=_DEFAULT_COLLECTION_METADATA,
            )
        else:
            try:
                client.get_collection(collection_name)
            except Exception:
                pass
            else:
                raise ValueError(f"Collection {collection_name} already exists.")
            collection = client.create_collection(
                collection_name,
                embedding_function=_chroma_embedding(embedding_function, embedding_model),
                metadata=_DEFAULT_COLLECTION_METADATA,
            )
        offset = collection.count() if extra_docs else 0
        files = get_files_from_dir(dir_path, custom_text_types, recursive, limits=limits)
        chunks, sources = split_files_to_chunks(
            files,
            max_tokens,
            chunk_mode,
            must_break_at_empty_line,
            custom_text_split_function,
            limits=limits,
        )
        logger.info("Found %d chunks.", len(chunks))
        for start in range(0, len(chunks), _CHROMA_MAX_BATCH):
            end = min(start + _CHROMA_MAX_BATCH, len(chunks))
            collection.upsert(
                documents=chunks[start:end],
                ids=[f"doc_{i + offset}" for i in range(start, end)],
                metadatas=sources[start:end],
            )
    except ValueError as e:
        logger.warning("%s", e)
    return client


def query_vector_db(
    query_texts: list[str],
    n_results: int = 10,
    client: Any = None,
    db_path: str = "tmp/chromadb.db",
    collection_name: str = "all-my-documents",
    search_string: str = "",
    embedding_model: str = "all-MiniLM-L6-v2",
    embedding_function: Any = None,
) -> Any:
    """Chroma's query result (``ids``, ``documents``, ``distances``, ...; one list per query)
    for the texts, limited to documents containing ``search_string`` when one is given."""
    client = _chroma_client(client, db_path)
    embed = _chroma_embedding(embedding_function, embedding_model)
    collection = client.get_collection(collection_name, embedding_function=embed)
    return collection.query(
        query_embeddings=embed(list(query_texts)),
        n_results=n_results,
        where_document={"$contains": search_string} if search_string else None,
    )
