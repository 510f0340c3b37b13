"""The runnable parts of a docs page (``website/docs/**/*.md``), in page order.

- Every fenced block whose info string starts with ``python`` (or ``py``) is an example: it
  runs. There is no way to skip one: an example that cannot run does not belong in the docs.
- ``<!-- docs-setup`` ... ``-->`` is hidden Python (an HTML comment: not rendered) run at its
  place in the page: scripting the fake model's replies, the human's answers, a file an
  example reads.
- ``<!-- docs-test: docker jupyter -->`` gives the page's test these pytest markers (the layers
  of the suite: docker, jupyter, redis, local_model, slow).

The conventions, for authors, are in ``website/README.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Chunk", "Page", "read_page"]

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)$", re.M)
_SETUP = re.compile(r"<!--\s*docs-setup[ \t]*\n(?P<code>.*?)-->", re.S)
_MARKERS = re.compile(r"<!--\s*docs-test:(?P<markers>[^>]*?)-->")


@dataclass(frozen=True)
class Chunk:
    """Python to run: an example (shown) or a setup (hidden), from ``line`` of the page."""

    code: str
    line: int
    hidden: bool


@dataclass(frozen=True)
class Page:
    path: Path
    chunks: list[Chunk]
    markers: list[str]


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _dedent(block: str, indent: str) -> str:
    lines = block.splitlines()
    return "\n".join(line[len(indent) :] if line.startswith(indent) else line for line in lines)


def read_page(path: Path) -> Page:
    text = path.read_text(encoding="utf-8")
    chunks: list[tuple[int, Chunk]] = []
    hidden_spans = []
    for m in _SETUP.finditer(text):
        chunks.append((m.start(), Chunk(m.group("code"), _line_of(text, m.start()) + 1, True)))
        hidden_spans.append((m.start(), m.end()))
    pos = 0
    while True:
        start = _FENCE.search(text, pos)
        if start is None:
            break
        setup = next(((a, b) for a, b in hidden_spans if a <= start.start() < b), None)
        if setup is not None:
            # A fence inside a setup (a scripted reply holding a code block) is the setup's
            # text: its closing line may be in the setup or nowhere, never a block after it.
            pos = setup[1]
            continue
        fence, indent = start.group("fence"), start.group("indent")
        end = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M)
        close = end.search(text, start.end())
        if close is None:
            raise ValueError(f"{path}:{_line_of(text, start.start())}: a code fence never closes")
        body = text[start.end() + 1 : close.start()]
        language = start.group("info").strip().split(" ")[0].split("{")[0].lower()
        if language in ("python", "py"):
            line = _line_of(text, start.start()) + 1
            chunks.append((start.start(), Chunk(_dedent(body, indent), line, False)))
        pos = close.end()
    markers = [name for m in _MARKERS.finditer(text) for name in m.group("markers").split()]
    return Page(path, [c for _, c in sorted(chunks, key=lambda pair: pair[0])], markers)
