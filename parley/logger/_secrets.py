"""What the runtime loggers never write: credentials, found by the key that holds them.

A key is secret when one of its words (split at ``_``, ``-``, ``.`` and case changes) names a
credential (``api_key``, ``azure_ad_token``, ``client_secret``, ``Authorization``,
``x-api-key``...), or when AutoGen's loggers dropped it (``organization``, ``base_url``,
``azure_endpoint``). ``max_tokens`` and ``prompt_tokens`` are counts, not tokens, and stay.
Objects that hold credentials out of sight of any key (HTTP clients) are never walked.

As a second guard, the credential values parley knows (:mod:`parley._credentials`' registry:
every config's client keys, as its client is built, the values found while stripping, and
credential environment variables) are replaced by ``<redacted>`` in the text about to be
written, wherever they ended up (a tool's output, a function's source): :func:`scrub`.
"""

from __future__ import annotations

import functools
import re

from .._credentials import (
    REDACTED,
    known,
    looks_secret,
    remember,
    remember_environment,
    remember_in,
    scrub,
)

__all__ = [
    "REDACTED",
    "SECRET_KEYS",
    "is_secret_key",
    "known",
    "remember",
    "remember_environment",
    "remember_in",
    "remember_value",
    "scrub",
]

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


def is_secret_key(key: object) -> bool:
    """Whether a dict key or attribute name holds a credential (see the module docstring)."""
    return isinstance(key, str) and _secret_name(key)


@functools.lru_cache(maxsize=4096)  # the same few keys, record after record
def _secret_name(key: str) -> bool:
    lowered = key.lower()
    if lowered in SECRET_KEYS:
        return True
    return any(word.lower() in _SECRET_WORDS for word in _WORDS.split(key) if word)


def remember_value(key: str, value: object) -> None:
    """Note ``value``, dropped from a record under ``key``, as a credential: unless ``key`` is
    one of AutoGen's exclusions that are no credential (a ``base_url`` is not scrubbed from
    other texts)."""
    if key.lower() not in SECRET_KEYS or looks_secret(key):
        remember(value)
