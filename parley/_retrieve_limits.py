"""How much RetrieveChat reads from one document, and what happens to one that is too big.

A document is refused (:class:`~parley.exceptions.DocumentRefusedError`, naming it and the limit)
when it is larger than ``max_bytes`` as stored or downloaded (a ``Content-Length`` over the limit
is refused before the body is read; a body without one is read until it passes the limit), when
the files packed in a zip-based format (Word, PowerPoint, Excel, OpenDocument, EPUB) or the text
of a PDF come to more than ``max_unpacked_bytes``, or when downloading, reading and chunking it
takes longer than ``max_seconds``. Where many documents are indexed, a refused one is skipped with
a warning that names it; when it is the only one, the refusal is an error.

The limits are :class:`ReadLimits`; RetrieveChat takes them from its ``retrieve_config``
(``max_doc_bytes``, ``max_unpacked_bytes``, ``max_doc_seconds``), the functions of
:mod:`parley.retrieve_utils` as ``limits=``.
"""

from __future__ import annotations

import logging
import math
import time
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .exceptions import DocumentRefusedError

__all__ = [
    "DEFAULT_LIMITS",
    "ZIP_FORMATS",
    "Deadline",
    "ReadLimits",
    "check_stored_size",
    "limits_from_config",
    "over_limit",
    "refuse_or_skip",
]

logger = logging.getLogger("parley.retrieve_utils")

_MB = 1024 * 1024
# Formats that are zip archives of XML parts: their readers unpack every part they need.
ZIP_FORMATS = frozenset(
    {"docx", "docm", "dotx", "pptx", "pptm", "xlsx", "xlsm", "epub", "odt", "ods", "odp"}
)


@dataclass(frozen=True)
class ReadLimits:
    """The most RetrieveChat reads of one document (raise them for large trusted documents)."""

    max_bytes: int = 100 * _MB
    """A file as stored, or a download's body."""
    max_unpacked_bytes: int = 100 * _MB
    """The parts of a zip-based document unpacked, or the text taken from a PDF."""
    max_seconds: float = 120.0
    """Downloading, reading and chunking one document."""

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_unpacked_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive number of bytes, got {value!r}")
        seconds = self.max_seconds
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
            raise ValueError(f"max_seconds must be a positive number, got {seconds!r}")


DEFAULT_LIMITS = ReadLimits()

_CONFIG_KEYS = {
    "max_doc_bytes": "max_bytes",
    "max_unpacked_bytes": "max_unpacked_bytes",
    "max_doc_seconds": "max_seconds",
}


def limits_from_config(config: Mapping[str, Any]) -> ReadLimits:
    """The limits a ``retrieve_config`` sets (its other keys are ignored)."""
    given = {field: config[key] for key, field in _CONFIG_KEYS.items() if key in config}
    return ReadLimits(**given) if given else DEFAULT_LIMITS


def _size(count: int) -> str:
    return f"{count / _MB:.1f} MB" if count >= _MB else f"{count} bytes"


def over_limit(what: str, size: int, field: str, limit: int) -> str:
    """The reason of a refusal: ``what`` came to ``size``, over the limit ``field``."""
    key = next(k for k, f in _CONFIG_KEYS.items() if f == field)
    return (
        f"{what} {_size(size)}, more than {field}={_size(limit)} (raise it with "
        f"retrieve_config[{key!r}], or limits=ReadLimits({field}=...) in retrieve_utils)"
    )


class Deadline:
    """The time one document may take; :meth:`check` raises once it has passed."""

    def __init__(self, source: str, limits: ReadLimits) -> None:
        self.source = source
        self.seconds = float(limits.max_seconds)
        self._end = time.monotonic() + self.seconds if math.isfinite(self.seconds) else math.inf

    def check(self) -> None:
        if time.monotonic() > self._end:
            raise DocumentRefusedError(
                self.source,
                f"reading and chunking it took longer than max_seconds={self.seconds:g} (raise "
                "it with retrieve_config['max_doc_seconds'], or limits=ReadLimits(max_seconds="
                "...) in retrieve_utils)",
            )


def check_stored_size(path: str, source: str, limits: ReadLimits) -> None:
    """Refuse a file larger than ``max_bytes``, or a zip-based one whose parts unpack to more
    than ``max_unpacked_bytes``.

    The sizes a zip declares are a true bound: Python's ``zipfile`` (which python-docx,
    python-pptx, openpyxl and unstructured read through) never returns more bytes of a part
    than its declared size, and fails its checksum when the data was cut."""
    size = Path(path).stat().st_size
    if size > limits.max_bytes:
        raise DocumentRefusedError(source, over_limit("it is", size, "max_bytes", limits.max_bytes))
    if Path(path).suffix.lower().lstrip(".") not in ZIP_FORMATS or not zipfile.is_zipfile(path):
        return
    with zipfile.ZipFile(path) as archive:
        unpacked = sum(info.file_size for info in archive.infolist())
    if unpacked > limits.max_unpacked_bytes:
        raise DocumentRefusedError(
            source,
            over_limit(
                f"its {_size(size)} unpack to",
                unpacked,
                "max_unpacked_bytes",
                limits.max_unpacked_bytes,
            ),
        )


def refuse_or_skip(error: DocumentRefusedError, alone: bool) -> None:
    """Raise ``error`` for a document given alone; else warn, naming it, and go on."""
    if alone:
        raise error
    logger.warning("skipping %s", error)
