"""What the runtime loggers never write: credentials, found by the key that holds them.

A key is secret when its words (split at ``_``, ``-``, ``.`` and case changes) name a
credential (``api_key``, ``azure_ad_token``, ``client_secret``, ``Authorization``,
``x-api-key``...), or when AutoGen's loggers dropped it (``organization``,
``base_url``, ``azure_endpoint``). ``max_tokens`` and ``prompt_tokens`` are counts, not tokens,
and stay; so do other keys with the word ``key`` in them (``key``, ``cache_key``, ``some_key``:
AutoGen's records keep them), unless their value looks like a credential (``sk-...``, ``Bearer ...``):
:func:`is_secret_item`. Objects that hold credentials out of sight of any key (HTTP clients)
are never walked.

As a second guard, the credential values parley knows (:mod:`parley._credentials`' registry:
every config's client keys, as its client is built, the values found while stripping, and
credential environment variables) are replaced by ``<redacted>`` in the text about to be
written, wherever they ended up (a tool's output, a function's source): :func:`scrub`.
"""

from __future__ import annotations

import functools
import itertools
import re

from .._credentials import (
    CREDENTIAL_VALUE,
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
    "is_secret_item",
    "is_secret_key",
    "known",
    "maybe_secret_key",
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
# Words that make a key secret wherever they appear in it (besides ``looks_secret``'s).
_SECRET_WORDS = frozenset({"pwd", "bearer", "signature"})
# Words that make a following "key" a credential (besides ``looks_secret``'s pairs).
_KEY_QUALIFIERS = frozenset(
    {"client", "master", "signing", "encryption", "license", "service", "session", "ssh"}
)
_WORDS = re.compile(r"[_\-.\s]+|(?<=[a-z])(?=[A-Z])")


def is_secret_key(key: object) -> bool:
    """Whether a dict key or attribute name holds a credential (see the module docstring)."""
    return isinstance(key, str) and _secret_name(key)


def maybe_secret_key(key: object) -> bool:
    """Whether ``key`` is no credential's name but has the word ``key`` in it: its value is
    dropped when it looks like a credential (:func:`is_secret_item`)."""
    return isinstance(key, str) and _key_word(key)


def is_secret_item(key: object, value: object) -> bool:
    """Whether ``key: value`` is dropped from a record: a secret key, or a key with the word
    ``key`` in it holding a credential-looking string."""
    if is_secret_key(key):
        return True
    return (
        type(value) is str and maybe_secret_key(key) and CREDENTIAL_VALUE.match(value) is not None
    )


@functools.lru_cache(maxsize=4096)  # the same few keys, record after record
def _secret_name(key: str) -> bool:
    lowered = key.lower()
    if lowered in SECRET_KEYS or looks_secret(key):
        return True
    words = [word.lower() for word in _WORDS.split(key) if word]
    if any(word in _SECRET_WORDS for word in words):
        return True
    return any(a in _KEY_QUALIFIERS and b == "key" for a, b in itertools.pairwise(words))


@functools.lru_cache(maxsize=4096)
def _key_word(key: str) -> bool:
    return not _secret_name(key) and any(
        word.lower() == "key" for word in _WORDS.split(key) if word
    )


def remember_value(key: str, value: object) -> None:
    """Note ``value``, dropped from a record under ``key``, as a credential: unless ``key`` is
    one of AutoGen's exclusions that are no credential (a ``base_url`` is not scrubbed from
    other texts)."""
    if key.lower() not in SECRET_KEYS or looks_secret(key):
        remember(value)
