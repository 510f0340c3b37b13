"""Reading documents for RetrieveChat: text, Markdown, HTML, PDF, Word, and URLs.

The readers of :mod:`parley.retrieve_utils`. PDF needs ``pypdf``, Word ``python-docx``, HTML
``beautifulsoup4`` and ``markdownify`` (all in ``pip install 'parley[retrieve]'``), each imported
when a file of its kind is read. A URL is fetched only when a caller asks for it (a ``docs_path``
that is a URL); nothing else here touches the network.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ._retrieve_limits import DEFAULT_LIMITS, Deadline, ReadLimits, check_stored_size, over_limit
from .exceptions import DocumentRefusedError

__all__ = [
    "HAS_DOCX",
    "HAS_UNSTRUCTURED",
    "extract_text_from_docx",
    "extract_text_from_pdf",
    "get_file_from_url",
    "is_url",
    "parse_html_to_markdown",
    "read_text",
]

logger = logging.getLogger("parley.retrieve_utils")

HAS_UNSTRUCTURED = importlib.util.find_spec("unstructured") is not None
HAS_DOCX = importlib.util.find_spec("docx") is not None
_USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0 Safari/537.36"
)
_URL_TIMEOUT = 30.0  # seconds a connection may stay silent
_BLOCK = 64 * 1024


def _need(module: str, package: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"{package} is needed to read this file: pip install 'parley[retrieve]'"
        ) from e


def extract_text_from_pdf(
    file: str, *, limits: ReadLimits = DEFAULT_LIMITS, deadline: Deadline | None = None
) -> str:
    """The text of every page of a PDF, in order ("" with a warning when there is none).

    An encrypted file is opened with the empty password, as PDF readers do for files that are
    only protected against editing. pypdf caps what one compressed stream may inflate to; the
    text taken from all pages together is held to ``limits.max_unpacked_bytes`` (characters)
    and the time to ``deadline``, page by page (DocumentRefusedError past either)."""
    pypdf = _need("pypdf", "pypdf")
    reader = pypdf.PdfReader(file)
    if reader.is_encrypted:
        try:
            reader.decrypt("")
        except Exception as e:
            logger.warning("Could not decrypt PDF %s: %s", file, e)
            return ""
    pages: list[str] = []
    size = 0
    for page in reader.pages:
        if deadline is not None:
            deadline.check()
        text = page.extract_text() or ""
        size += len(text)
        if size > limits.max_unpacked_bytes:
            raise DocumentRefusedError(
                file,
                over_limit(
                    "its text comes to more than",
                    size,
                    "max_unpacked_bytes",
                    limits.max_unpacked_bytes,
                ),
            )
        pages.append(text)
    joined = "".join(pages)
    if not joined:
        logger.warning("Could not extract text from PDF %s", file)
    return joined


def extract_text_from_docx(file: str) -> str:
    """The paragraphs and table cells of a Word (.docx) file, one per line."""
    docx = _need("docx", "python-docx")
    document = docx.Document(file)
    lines = [p.text for p in document.paragraphs]
    for table in document.tables:
        for row in table.rows:
            lines.append(" | ".join(cell.text for cell in row.cells))
    return "\n".join(lines)


def parse_html_to_markdown(html: str, url: str | None = None) -> str:
    """An HTML page as Markdown, as AutoGen made it: its title as a ``# `` heading, then the
    whole page through markdownify's defaults (the title again, ``<h1>`` underlined with
    ``=``); for an English Wikipedia page only the article, under its own heading. Scripts and
    styles are dropped, runs of blank lines become one. A page without a title has no heading
    (AutoGen raised ``TypeError``)."""
    bs4 = _need("bs4", "beautifulsoup4")
    markdownify = _need("markdownify", "markdownify")
    soup = bs4.BeautifulSoup(html, "html.parser")
    title = soup.title.string if soup.title and soup.title.string else None
    for tag in soup(["script", "style"]):
        tag.extract()
    converter = markdownify.MarkdownConverter()
    article = None
    if url is not None and url.startswith("https://en.wikipedia.org/"):
        article = soup.find("div", {"id": "mw-content-text"})
    if article is not None:
        heading = soup.find("span", {"class": "mw-page-title-main"})
        main_title = heading.string if heading is not None and heading.string else title
        text = f"# {main_title}\n\n{converter.convert_soup(article)}"
    else:
        text = converter.convert_soup(soup)
    text = re.sub(r"\n{2,}", "\n\n", text.replace("\r\n", "\n")).strip()
    return f"# {title}\n\n{text}" if title is not None else text


def read_text(
    path: str, *, limits: ReadLimits = DEFAULT_LIMITS, deadline: Deadline | None = None
) -> str:
    """A file's text by its extension (the unstructured package's readers first, when it is
    installed, for the formats it knows). A file over ``limits`` (its size, what a zip-based
    format unpacks to) is refused with DocumentRefusedError before it is read."""
    check_stored_size(path, path, limits)
    extension = Path(path).suffix.lower().lstrip(".")
    if HAS_UNSTRUCTURED and extension in (
        "doc", "docx", "epub", "msg", "odt", "org", "ppt", "pptx", "rtf", "rst", "xlsx"
    ):  # fmt: skip
        from unstructured.partition.auto import partition

        return "\n".join(str(element) for element in partition(path))
    if extension == "pdf":
        return extract_text_from_pdf(path, limits=limits, deadline=deadline)
    if extension == "docx":
        return extract_text_from_docx(path)
    with open(path, encoding="utf-8", errors="ignore") as f:
        text = f.read()
    if extension in ("html", "htm"):
        return parse_html_to_markdown(text)
    return text


def is_url(string: str) -> bool:
    """Whether ``string`` has a scheme and a network location (``file:///x`` has none)."""
    try:
        parsed = urlparse(string)
    except (ValueError, TypeError):
        return False
    return bool(parsed.scheme and parsed.netloc)


def _generate_file_name_from_url(url: str, max_length: int = 255) -> str:
    parsed = urlparse(url)
    digest = hashlib.blake2b(url.encode("utf-8")).hexdigest()[:8]
    name = f"{parsed.netloc}_{os.path.basename(parsed.path)}_{digest}"
    return name[-max_length:]


def _download(url: str, target: Path, limits: ReadLimits) -> str:
    """Stream ``url``'s body into ``target`` (at most ``limits.max_bytes``, within
    ``limits.max_seconds``); its content type. DocumentRefusedError past a limit, with nothing
    left at ``target``."""
    deadline = Deadline(url, limits)
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    partial = target.with_name(target.name + ".part")
    try:
        with urllib.request.urlopen(request, timeout=_URL_TIMEOUT) as response:
            content_type = str(response.headers.get("content-type", ""))
            declared = response.headers.get("content-length")
            if (
                declared is not None
                and declared.strip().isdigit()
                and (int(declared) > limits.max_bytes)
            ):
                raise DocumentRefusedError(
                    url,
                    over_limit(
                        "its Content-Length says", int(declared), "max_bytes", limits.max_bytes
                    ),
                )
            received = 0
            with partial.open("wb") as out:
                while block := response.read(_BLOCK):
                    received += len(block)
                    if received > limits.max_bytes:
                        raise DocumentRefusedError(
                            url,
                            over_limit(
                                "its body came to more than",
                                received,
                                "max_bytes",
                                limits.max_bytes,
                            ),
                        )
                    out.write(block)
                    deadline.check()
            charset = response.headers.get_content_charset() or "utf-8"
        if "text/html" in content_type:
            html = partial.read_bytes().decode(charset, "ignore")
            target.write_text(parse_html_to_markdown(html, url), "utf-8")
            partial.unlink()
        else:
            partial.replace(target)
        return content_type
    finally:
        partial.unlink(missing_ok=True)


def get_file_from_url(
    url: str, save_path: str | None = None, *, limits: ReadLimits = DEFAULT_LIMITS
) -> tuple[str, str] | None:
    """Download ``url`` to ``save_path``, as AutoGen did: into it when it is an existing
    directory (default ``tmp/chromadb``, created), else to that file (its folder created), under
    a name made from the URL's host, file name and hash when it is a directory. HTML is saved
    as Markdown, anything else as it came. ``(saved file, url)``, or None (with a warning) when
    the download fails; DocumentRefusedError when the body is over ``limits.max_bytes`` (told
    by its Content-Length before it is read, else while it streams) or takes longer than
    ``limits.max_seconds``."""
    if save_path is None:
        save_path = os.path.join("tmp", "chromadb")
        os.makedirs(save_path, exist_ok=True)
    if os.path.isdir(save_path):
        target = Path(save_path) / _generate_file_name_from_url(url)
    else:
        target = Path(save_path)
        target.parent.mkdir(parents=True, exist_ok=True)
    try:
        _download(url, target, limits)
    except (urllib.error.URLError, OSError, ValueError) as e:
        logger.warning("Failed to download %s: %s", url, e)
        return None
    return str(target), url
