"""Terminal colours (AutoGen's ``autogen.formatting_utils``): ``colored``.

AutoGen used ``termcolor.colored`` when termcolor was installed and plain text otherwise.
parley has no such dependency: this is a small implementation of termcolor's ``colored``
with its signature, its colour and attribute names and its rules for when to colour:

1. ``no_color=True`` -> plain; ``force_color=True`` -> coloured;
2. the environment: ``ANSI_COLORS_DISABLED`` or ``NO_COLOR`` set (non-empty, see
   https://no-color.org) -> plain; ``FORCE_COLOR`` set -> coloured;
3. otherwise coloured only when ``sys.stdout`` is a terminal, so text written to files, pipes
   and notebooks carries no escape codes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

__all__ = ["ATTRIBUTES", "COLORS", "HIGHLIGHTS", "colored"]

# termcolor's names and SGR codes.
COLORS: dict[str, int] = {
    "black": 30,
    "grey": 30,
    "red": 31,
    "green": 32,
    "yellow": 33,
    "blue": 34,
    "magenta": 35,
    "cyan": 36,
    "light_grey": 37,
    "dark_grey": 90,
    "light_red": 91,
    "light_green": 92,
    "light_yellow": 93,
    "light_blue": 94,
    "light_magenta": 95,
    "light_cyan": 96,
    "white": 97,
}
HIGHLIGHTS: dict[str, int] = {f"on_{name}": code + 10 for name, code in COLORS.items()}
ATTRIBUTES: dict[str, int] = {
    "bold": 1,
    "dark": 2,
    "underline": 4,
    "blink": 5,
    "reverse": 7,
    "concealed": 8,
    "strike": 9,
}
_RESET = "\033[0m"


def colored(
    text: object,
    color: str | None = None,
    on_color: str | None = None,
    attrs: Iterable[str] | None = None,
    *,
    no_color: bool | None = None,
    force_color: bool | None = None,
) -> str:
    """``str(text)`` wrapped in the ANSI codes for ``color`` (``"red"``, ``"light_blue"``...),
    background ``on_color`` (``"on_white"``...) and ``attrs`` (``["bold", "underline"]``),
    when colours are on (see the module docstring); otherwise ``str(text)`` itself.

    An unknown name raises ``KeyError`` (as termcolor), whether colours are on or not, so a
    misspelling shows up in a plain terminal too.
    """
    codes = [_code(COLORS, color, "color"), _code(HIGHLIGHTS, on_color, "on_color")]
    codes += [_code(ATTRIBUTES, attr, "attrs") for attr in attrs or ()]
    result = str(text)
    if not _can_colour(no_color, force_color):
        return result
    wanted = [code for code in codes if code is not None]
    if not wanted:
        return result
    return "".join(f"\033[{code}m" for code in wanted) + result + _RESET


def _code(table: dict[str, int], name: str | None, what: str) -> int | None:
    if name is None:
        return None
    try:
        return table[name]
    except KeyError:
        raise KeyError(f"{what}={name!r} is not one of {sorted(table)}") from None


def _can_colour(no_color: bool | None, force_color: bool | None) -> bool:
    if no_color:
        return False
    if force_color:
        return True
    if os.environ.get("ANSI_COLORS_DISABLED") or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced by an object without it, or closed
        return False
