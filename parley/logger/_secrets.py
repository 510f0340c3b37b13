"""What the runtime loggers never write: credentials, found by the key that holds them.

A key is secret when one of its words (split at ``_``, ``-``, ``.`` and case changes) names a
credential (``api_key``, ``azure_ad_token``, ``client_secret``, ``Authorization``,
``x-api-key``...), or when AutoGen's loggers dropped it (``organization``, ``base_url``,
``azure_endpoint``). ``max_tokens`` and ``prompt_tokens`` are counts, not tokens, and stay.
Objects that hold credentials out of sight of any key (HTTP clients) are never walked.

As a second guard, every secret value found while stripping (and the values of secret-named
environment variables) is remembered, and :func:`scrub` replaces it in the text about to be
written, wherever it ended up (a tool's output, a function's source).
"""

from __future__ import annotations

import functools
import os
import re
import threading

__all__ = [
    "REDACTED",
    "SECRET_KEYS",
    "is_secret_key",
    "known",
    "remember",
    "remember_in",
    "scrub",
]

REDACTED = "<redacted>"
# AutoGen's exclusions (not all of them secrets, but AutoGen users expect them absent).
SECRET_KEYS = frozenset(
    {"organization", "base_url", "azure_endpoint", "http_client", "http_async_client"}
)
_SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "credential",
        "credentials",
        "authorization",
        "auth",
        "cookie",
        "bearer",
        "signature",
    }
)
_WORDS = re.compile(r"[_\-.\s]+|(?<=[a-z])(?=[A-Z])")
_MIN_SECRET = 6  # shorter values are not scrubbed from text (too likely to be ordinary words)

_known: frozenset[str] = frozenset()
_lock = threading.Lock()


def is_secret_key(key: object) -> bool:
    """Whether a dict key or attribute name holds a credential (see the module docstring)."""
    return isinstance(key, str) and _secret_name(key)


@functools.lru_cache(maxsize=4096)  # the same few keys, record after record
def _secret_name(key: str) -> bool:
    lowered = key.lower()
    if lowered in SECRET_KEYS:
        return True
    return any(word.lower() in _SECRET_WORDS for word in _WORDS.split(key) if word)


def remember(value: object) -> None:
    """Note a secret value, so that :func:`scrub` removes it from any text."""
    global _known
    if isinstance(value, dict):
        remember_in(value)
        return
    if isinstance(value, str) and value.lower().startswith("bearer "):
        value = value[7:]
    if isinstance(value, str) and len(value) >= _MIN_SECRET and value not in _known:
        with _lock:
            _known = _known | {value}


def remember_in(config: object, depth: int = 0) -> None:
    """Note the secret values of a config dict (and of the dicts in it: headers)."""
    if not isinstance(config, dict) or depth > 3:
        return
    for key, value in config.items():
        if is_secret_key(key):
            remember(value)
        if isinstance(value, dict):
            remember_in(value, depth + 1)
        elif isinstance(value, str) and value.lower().startswith("bearer "):
            remember(value[7:])


def remember_environment() -> None:
    """Note the values of secret-named environment variables (``OPENAI_API_KEY``...)."""
    for name, value in os.environ.items():
        if is_secret_key(name):
            remember(value)


def known() -> frozenset[str]:
    """The secret values remembered so far (a new set object whenever one is added, so a
    text scrubbed earlier can tell whether it must be scrubbed again)."""
    return _known


def scrub(text: str, secrets: frozenset[str] | None = None) -> str:
    """``text`` with every remembered secret value (or every one of ``secrets``) replaced by
    ``<redacted>``."""
    for secret in _known if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text
