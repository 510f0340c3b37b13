"""``.env`` files for ``config_list_from_dotenv``, read with python-dotenv (as AutoGen does).

python-dotenv is imported on first use, so ``import parley`` does not pay for it.

What parley adds: a line python-dotenv cannot parse (python-dotenv logs and skips it) raises
``DotenvSyntaxError`` naming the file and line, never the text, which may hold a secret, and
the whole file is checked before any variable is set. A file it reads is registered as
protected (``parley._protected_paths``): code executors refuse a work dir holding it. The search for a ``.env`` starts in the
current directory (python-dotenv's default starts beside the calling source file, which for
AutoGen was inside the installed package).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from .._protected_paths import protect
from ..exceptions import DotenvSyntaxError

__all__ = ["find_env_file", "load_env_file"]


def load_env_file(path: str | os.PathLike[str]) -> None:
    """Set the variables of the ``.env`` file at ``path`` that are not set yet.

    python-dotenv's ``load_dotenv`` with its defaults: values may be quoted, ``export`` is
    allowed, ``${VAR}`` is expanded; a variable already in the environment is kept.
    """
    import dotenv
    from dotenv.parser import parse_stream

    text = Path(path).read_text(encoding="utf-8")
    protect(path, "a .env file parley loaded")  # it holds keys: no code may read or write it
    for binding in parse_stream(io.StringIO(text)):
        if binding.error:
            raise DotenvSyntaxError(
                os.fspath(path), binding.original.line, "expected KEY=VALUE (or a # comment)"
            )
    dotenv.load_dotenv(stream=io.StringIO(text), override=False)


def find_env_file(filename: str = ".env") -> str | None:
    """The path of the first ``filename`` in the current directory or above it, if any."""
    import dotenv

    return dotenv.find_dotenv(filename, usecwd=True) or None
