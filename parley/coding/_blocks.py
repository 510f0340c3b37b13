"""The vocabulary of code in messages, shared by ``code_utils`` and the executors.

The fence pattern, finding fenced blocks in a text, the text of a message's content, the
language guess, the spellings of a language, the word a timed-out result ends with. Data flows
one way: ``parley.code_utils`` re-exports these names (and ``execute_code`` from
``_legacy_execute``, which loads the rest of this package only where it runs code); nothing in
this package imports ``code_utils``. Importing this module is cheap (``re`` and ``sys``), since
``import parley`` imports it through ``code_utils``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from typing import Any

__all__ = [
    "CODE_BLOCK_PATTERN",
    "DEFAULT_WORK_DIR",
    "POWERSHELLS",
    "PYTHON_VARIANTS",
    "SHELLS",
    "TIMEOUT_MSG",
    "UNKNOWN",
    "WIN32",
    "content_str",
    "content_text",
    "extract_code",
    "infer_lang",
    "legacy_timeout_logs",
]

# ```lang\ncode\n```: optional spaces around an optional tag, \n or \r\n line breaks, and the
# closing fence on its own (possibly indented) line.
CODE_BLOCK_PATTERN = r"```[ \t]*(\w+)?[ \t]*\r?\n(.*?)\r?\n[ \t]*```"
UNKNOWN = "unknown"
TIMEOUT_MSG = "Timeout"
DEFAULT_WORK_DIR = "coding"
"""Where code runs unless told otherwise: a dedicated folder in the current directory (AutoGen
used ``.`` for the executors and a folder inside its installed package for ``execute_code``)."""
WIN32 = sys.platform == "win32"
PYTHON_VARIANTS = ["python", "Python", "py"]
SHELLS = ("bash", "shell", "sh")
POWERSHELLS = ("pwsh", "powershell", "ps1")


def content_str(content: str | list[Any] | None) -> str:
    """The text of a message content: ``None`` is ``""``, text parts are joined, images are
    ``<image>``. Malformed content raises AutoGen's errors, with AutoGen's texts: ``TypeError``
    for a content or part of the wrong type, ``AssertionError`` for a part without ``type``,
    ``ValueError`` for an unknown part type."""
    return _text_of(content, strict=True)


def content_text(content: Any) -> str:
    """Like :func:`content_str` (a parley helper), for any content a message may hold: a part
    of another type (audio, a file) shows as ``<type>`` instead of raising, so that a valid
    message never breaks printing or a text-only speaker selector."""
    return _text_of(content, strict=False)


def _text_of(content: Any, *, strict: bool) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        if strict:
            raise TypeError(f"content must be None, str, or list, but got {type(content)}")
        return str(content)
    parts = []
    for item in content:
        if not isinstance(item, dict if strict else Mapping):
            if strict:
                raise TypeError(
                    "Wrong content format: every element should be dict if the content is a list."
                )
            parts.append(str(item))
        elif strict and "type" not in item:
            raise AssertionError("Wrong content format. Missing 'type' key in content's dict.")
        elif item.get("type") == "text":
            parts.append(str(item.get("text", "")))
        elif item.get("type") in ("image_url", "input_image"):
            parts.append("<image>")
        elif strict:
            raise ValueError(
                f"Wrong content format: unknown type {item['type']} within the content"
            )
        else:
            parts.append(f"<{item.get('type')}>")
    return "".join(parts)


def extract_code(
    text: str | list[Any],
    pattern: str = CODE_BLOCK_PATTERN,
    detect_single_line_code: bool = False,
) -> list[tuple[str, str]]:
    """The ``(language, code)`` pairs of the fenced blocks in ``text``.

    Without blocks: ``[("unknown", text)]``. With ``detect_single_line_code``, inline
    `` `code` `` spans are returned too, as ``("", code)``, everything stripped, and no match
    gives ``[]``.
    """
    text = content_str(text)
    if not detect_single_line_code:
        matches: list[tuple[str, str]] = re.findall(pattern, text, flags=re.DOTALL)
        return matches if matches else [(UNKNOWN, text)]
    found: list[tuple[str, str]] = []
    for lang, fenced, inline in re.findall(pattern + r"|`([^`]+)`", text, flags=re.DOTALL):
        if fenced:
            found.append((lang.strip(), fenced.strip()))
        elif inline:
            found.append(("", inline.strip()))
    return found


def infer_lang(code: str) -> str:
    """``"sh"`` for ``python x``/``pip ...`` commands, ``"python"`` if it compiles, else ``"unknown"``."""
    if code.startswith(("python ", "pip", "python3 ")):
        return "sh"
    try:
        compile(code, "test", "exec")
    except Exception:  # SyntaxError, ValueError (NUL bytes), RecursionError (deep nesting)...
        return UNKNOWN
    return "python"


def legacy_timeout_logs(logs: str) -> str:
    """The logs ``execute_code`` returns for a run that timed out: the output so far, then
    ``"Timeout"`` on a line of its own (just ``"Timeout"`` when nothing was printed)."""
    separator = "\n" if logs and not logs.endswith("\n") else ""
    return logs + separator + TIMEOUT_MSG
