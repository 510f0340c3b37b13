"""``IOConsole``: the terminal stream, the global default after ``import parley.io``."""

from __future__ import annotations

import builtins
import getpass
from typing import Any

from .base import IOStream

__all__ = ["IOConsole"]


class IOConsole(IOStream):
    """Print to ``sys.stdout`` and read from ``sys.stdin``, through the builtins.

    ``sys.stdout`` is looked up on every call, so redirections made later (pytest's ``capsys``,
    ``contextlib.redirect_stdout``, a notebook kernel) are honoured.
    """

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        builtins.print(*objects, sep=sep, end=end, flush=flush)

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        """Read one line; with ``password=True`` the typing is hidden (``getpass``)."""
        if password:
            return getpass.getpass(prompt if prompt != "" else "Password: ")
        return builtins.input(prompt)
