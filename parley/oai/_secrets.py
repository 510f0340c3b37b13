"""What counts as a credential: in config field names, cache keys and error messages.

A name looks secret when its words (``apiKey`` and ``api-key`` are both ``api``, ``key``)
include ``token``, ``secret``, ``password``, ``credential(s)``, ``auth``, ``authorization``,
``cookie``, ``apikey``, or a pair such as ``api_key``/``access_key``/``private_key``. A value
is a credential under any name when it starts with an HTTP authentication scheme
(``Bearer ...``, ``Basic ...``) or looks like an OpenAI-style key (``sk-...``).
"""

from __future__ import annotations

import functools
import itertools
import re

__all__ = ["CREDENTIAL_VALUE", "looks_secret"]

_SECRET_WORDS = frozenset(
    {"token", "secret", "password", "passwd", "passphrase", "credential", "credentials"}
    | {"auth", "authorization", "cookie", "apikey"}
)
_KEY_QUALIFIERS = frozenset({"api", "access", "secret", "private", "subscription", "account"})
CREDENTIAL_VALUE = re.compile(
    r"\s*(?:(?:bearer|basic|digest|token|negotiate|ntlm|hmac|aws4-hmac-sha256|sharedkey"
    r"|sharedaccesssignature|apikey|api-key|key)\s+\S|sk-[A-Za-z0-9_-]{8,})",
    re.IGNORECASE,
)


def looks_secret(name: object) -> bool:
    """Whether ``name`` (a field, key or header name) names a credential."""
    if not isinstance(name, str):
        return False
    return _name_looks_secret(name)


@functools.lru_cache(maxsize=1024)
def _name_looks_secret(name: str) -> bool:
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()  # apiKey -> api_key
    words = re.findall(r"[a-z0-9]+", snake)
    if any(word in _SECRET_WORDS for word in words):
        return True
    return any(a in _KEY_QUALIFIERS and b == "key" for a, b in itertools.pairwise(words))
