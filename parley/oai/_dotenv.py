"""A small ``.env`` reader, so parley needs no python-dotenv.

Grammar, one assignment per line::

    # a comment                      blank lines are skipped too
    KEY=value                        surrounding whitespace is trimmed
    export KEY=value                 the shell's ``export`` prefix is allowed
    KEY=value # note                 an unquoted value ends at " #"; "a#b" keeps its "#"
    KEY='literal $text\\n'            single quotes: taken literally
    KEY="line\\nnext \\"q\\""          double quotes: \\n \\t \\r \\" \\\\ and friends are escapes
    KEY="spans
    lines"                           a quoted value may span lines

Unlike python-dotenv there is no ``${VAR}`` interpolation, and a line that isn't an assignment
(a bare ``KEY``, text after a closing quote, an unterminated quote) is an error naming the file
and line, never the value, which may be a secret. Loading keeps variables that are already set,
like python-dotenv's default.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..exceptions import DotenvSyntaxError

__all__ = ["DotenvSyntaxError", "find_dotenv", "load_dotenv", "parse_dotenv", "read_dotenv"]

_KEY = re.compile(r"[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*=[ \t]*")
_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "a": "\a",
    "0": "\0",
    '"': '"',
    "'": "'",
    "\\": "\\",
    "$": "$",
}


class _Parser:
    def __init__(self, text: str, source: str) -> None:
        self.text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
        self.source = source
        self.pos = 0
        self.line = 1

    def error(self, problem: str, line: int | None = None) -> DotenvSyntaxError:
        return DotenvSyntaxError(self.source, self.line if line is None else line, problem)

    def rest_of_line(self) -> str:
        end = self.text.find("\n", self.pos)
        return self.text[self.pos :] if end < 0 else self.text[self.pos : end]

    def next_line(self) -> None:
        end = self.text.find("\n", self.pos)
        self.pos = len(self.text) if end < 0 else end + 1
        self.line += 1

    def parse(self) -> dict[str, str]:
        values: dict[str, str] = {}
        while self.pos < len(self.text):
            stripped = self.rest_of_line().strip()
            if not stripped or stripped.startswith("#"):
                self.next_line()
                continue
            match = _KEY.match(self.text, self.pos)
            if match is None:
                raise self.error("expected KEY=VALUE (or a # comment)")
            key = match.group(1)
            self.pos = match.end()
            values[key] = self.value(key)
            self.next_line()
        return values

    def value(self, key: str) -> str:
        quote = self.text[self.pos : self.pos + 1]
        if quote in ("'", '"'):
            return self.quoted(key, quote)
        raw = self.rest_of_line()
        comment = re.search(r"[ \t]#", raw)
        if comment is not None:
            raw = raw[: comment.start()]
        self.pos += len(self.rest_of_line())
        return raw.strip()

    def quoted(self, key: str, quote: str) -> str:
        start_line = self.line
        self.pos += 1
        out: list[str] = []
        while True:
            if self.pos >= len(self.text):
                raise self.error(f"the value of {key} has no closing {quote}", start_line)
            char = self.text[self.pos]
            if char == quote:
                self.pos += 1
                break
            if char == "\\" and quote == '"' and self.pos + 1 < len(self.text):
                follower = self.text[self.pos + 1]
                out.append(_ESCAPES.get(follower, "\\" + follower))
                self.line += follower == "\n"
                self.pos += 2
                continue
            self.line += char == "\n"
            out.append(char)
            self.pos += 1
        trailer = self.rest_of_line().strip()
        if trailer and not trailer.startswith("#"):
            raise self.error(f"unexpected text after the closing {quote} of {key}")
        self.pos += len(self.rest_of_line())
        return "".join(out)


def parse_dotenv(text: str, source: str = "<string>") -> dict[str, str]:
    """The assignments in ``text``, in file order; a later duplicate wins.

    Raises ``DotenvSyntaxError`` naming ``source`` and the line of the first malformed entry.
    """
    return _Parser(text, source).parse()


def read_dotenv(path: str | os.PathLike[str]) -> dict[str, str]:
    """Parse the ``.env`` file at ``path`` (UTF-8)."""
    text = Path(path).read_text(encoding="utf-8")
    return parse_dotenv(text, source=os.fspath(path))


def load_dotenv(path: str | os.PathLike[str], *, override: bool = False) -> list[str]:
    """Set environment variables from the file at ``path``; return the names that were set.

    A variable already in the environment (even empty) is kept unless ``override`` is true. The
    whole file is parsed before anything is set, so a syntax error changes nothing.
    """
    values = read_dotenv(path)
    applied = [key for key in values if override or key not in os.environ]
    for key in applied:
        os.environ[key] = values[key]
    return applied


def find_dotenv(filename: str = ".env", start: str | os.PathLike[str] | None = None) -> Path | None:
    """The first ``filename`` found in ``start`` (default: the current directory) or above it."""
    here = Path.cwd() if start is None else Path(start).resolve()
    for folder in (here, *here.parents):
        candidate = folder / filename
        if candidate.is_file():
            return candidate
    return None
