"""The dangerous-command guard for shell blocks run on this machine: a guard, not a sandbox.

It stops a few commands a model writes carelessly and that would do lasting harm on the host:
``rm`` with both its recursive and force options (``rm -rf``, ``rm -r -f``, ``rm -fR``,
``rm --recursive --force``, ``sudo rm dir -rf``...), moving files to ``/dev/null``, ``dd``,
writing to a disk device, the classic fork bomb. Anything else passes: Python's
``shutil.rmtree``, ``find -delete``, a command built at run time. Code from a model you do not
trust belongs in the Docker sandbox. Both local paths use this one guard:
``LocalCommandLineCodeExecutor.sanitize_command`` (which raises ``ValueError``, as AutoGen's) and
``code_utils.execute_code`` (which returns exit code 1 and the reason, as it reports other
failures).
"""

from __future__ import annotations

import re
import shlex

from ._blocks import SHELLS

__all__ = ["dangerous_command"]

# (pattern, reason) for the commands that a pattern recognises well enough.
_PATTERNS = [
    (re.compile(r"\bmv\b.*?\s+/dev/null"), "Moving files to /dev/null is not allowed."),
    (re.compile(r"\bdd\b"), "Use of 'dd' command is not allowed."),
    (re.compile(r">\s*/dev/sd[a-z][1-9]?"), "Overwriting disk blocks directly is not allowed."),
    (re.compile(r":\(\)\{\s*:\|\:&\s*\};:"), "Fork bombs are not allowed."),
]
_RM_REASON = "Use of 'rm -rf' command is not allowed."
_SEPARATORS = ";&|()<>\n"


def _tokens(code: str) -> list[str]:
    """Shell words and operators; a newline is an operator, comments are dropped."""
    lexer = shlex.shlex(code, posix=True, punctuation_chars=_SEPARATORS)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: judge the words as they stand
        return re.findall(r"[^\s;&|()<>]+|[;&|()<>\n]+", code)


def _is_separator(token: str) -> bool:
    return bool(token) and all(ch in _SEPARATORS for ch in token)


def _rm_recursive_force(words: list[str]) -> bool:
    """Whether an ``rm`` among ``words`` (one simple command) gets -r and -f in any spelling.

    GNU rm reads options anywhere before ``--`` and accepts unambiguous prefixes of its long
    options (``--rec``, ``--f``).
    """
    for start, word in enumerate(words):
        if word != "rm" and not word.endswith("/rm"):
            continue
        recursive = force = False
        for option in words[start + 1 :]:
            if option == "--":
                break
            if option.startswith("--") and len(option) > 2:
                name = option[2:].split("=", 1)[0]
                recursive |= "recursive".startswith(name)
                force |= "force".startswith(name)
            elif option.startswith("-") and len(option) > 1:
                letters = option[1:]
                recursive |= "r" in letters or "R" in letters
                force |= "f" in letters
        if recursive and force:
            return True
    return False


def dangerous_command(language: str, code: str) -> str | None:
    """Why the shell ``code`` is refused, or None (other languages always pass)."""
    if language.lower() not in SHELLS:
        return None
    words: list[str] = []
    for token in [*_tokens(code), ";"]:
        if _is_separator(token):
            if _rm_recursive_force(words):
                return _RM_REASON
            words = []
        else:
            words.append(token)
    for pattern, reason in _PATTERNS:
        if pattern.search(code):
            return reason
    return None
