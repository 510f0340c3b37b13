"""The credentials this process was configured with, and keeping them out of every text parley
shows: logs, error messages (and the errors chained to them), spans, the web page.

One registry of *values*: every client key of every config entry is noted when its client is
built (:func:`remember_in`: ``api_key``, the AWS access key id, secret key and session token,
Azure's tokens, secret-looking headers...), and so are the values of credential environment
variables the SDKs read themselves (:func:`remember_environment`). A server that echoes a key
in an error ("API key not valid: AIza...") is then scrubbed by the value, whatever its shape;
the patterns of :func:`redact` (``sk-...``, ``Bearer ...``, Google and AWS key ids) catch keys
parley never saw. Values shorter than :data:`MIN_LENGTH` are not noted: blanking short strings
would blank ordinary words.

:func:`scrub_error` scrubs an exception in place before it leaves the client layer: its
message and ``args``, the attributes SDKs keep (``message``, ``body``, ``response``,
``request``, a JSON error's ``doc``), and, the same way, every exception chained to it
(``__cause__``, ``__context__``), so that a printed traceback is clean too. A chained error
whose text cannot be cleaned in place is replaced in the chain by a :class:`RedactedError`
with the same type name, text (scrubbed) and traceback.

The names: :func:`looks_secret` says whether a field, key or header name names a credential
(its words, ``apiKey`` and ``api-key`` both being ``api``, ``key``, include ``token``,
``secret``, ``password``, ``credential(s)``, ``auth``, ``authorization``, ``cookie``,
``apikey``, or a pair such as ``api_key``/``access_key``/``private_key``);
:data:`CREDENTIAL_VALUE` matches a value that is a credential under any name (``Bearer ...``,
``Basic ...``, ``sk-...``).
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import sys
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .exceptions import RedactedError

__all__ = [
    "CREDENTIAL_VALUE",
    "MIN_LENGTH",
    "REDACTED",
    "RedactedError",
    "known",
    "looks_secret",
    "redact",
    "remember",
    "remember_environment",
    "remember_in",
    "scrub",
    "scrub_error",
    "scrubbing_errors",
]

REDACTED = "<redacted>"
MIN_LENGTH = 8  # shorter values are not noted (too likely to be ordinary words)

_SECRET_WORDS = frozenset(
    {"token", "secret", "password", "passwd", "passphrase", "credential", "credentials"}
    | {"auth", "authorization", "cookie", "apikey"}
)
_KEY_QUALIFIERS = frozenset({"api", "access", "secret", "private", "subscription", "account"})
# An environment variable is a credential when one of its words is one of these
# (OPENAI_API_KEY, AWS_SESSION_TOKEN); "auth" alone is not enough: RAY_AUTH_MODE=disabled and
# SSH_AUTH_SOCK are no credentials.
_ENV_WORDS = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "pwd", "passphrase"}
    | {"credential", "credentials"}
)
CREDENTIAL_VALUE = re.compile(
    r"\s*(?:(?:bearer|basic|digest|token|negotiate|ntlm|hmac|aws4-hmac-sha256|sharedkey"
    r"|sharedaccesssignature|apikey|api-key|key)\s+\S|sk-[A-Za-z0-9_-]{8,})",
    re.IGNORECASE,
)
# Keys parley may never have been given: OpenAI-style keys (a 401 repeats part of one), an
# Authorization header's token, Google API keys, AWS access key ids.
_KEY_PATTERNS = re.compile(
    r"\bsk-[A-Za-z0-9*_\-]{2,}"
    r"|(?<![A-Za-z])Bearer\s+[^\s'\",}]+"
    r"|\bAIza[0-9A-Za-z_\-]{30,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    re.IGNORECASE,
)

_known: frozenset[str] = frozenset()
_lock = threading.Lock()


def looks_secret(name: object) -> bool:
    """Whether ``name`` (a field, key or header name) names a credential."""
    if not isinstance(name, str):
        return False
    return _name_looks_secret(name)


@functools.lru_cache(maxsize=1024)
def _name_looks_secret(name: str) -> bool:
    words = _words(name)
    if any(word in _SECRET_WORDS for word in words):
        return True
    return any(a in _KEY_QUALIFIERS and b == "key" for a, b in itertools.pairwise(words))


def _words(name: str) -> list[str]:
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()  # apiKey -> api_key
    return re.findall(r"[a-z0-9]+", snake)


def remember(value: object) -> None:
    """Note a secret value (a dict: its secret-named values), so that :func:`scrub` and
    :func:`redact` remove it from any text."""
    global _known
    if isinstance(value, Mapping):
        remember_in(value)
        return
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        return
    value = value.strip()
    for scheme in ("bearer ", "basic ", "token "):
        if value.lower().startswith(scheme):
            value = value[len(scheme) :].strip()
    if len(value) >= MIN_LENGTH and value not in _known:
        with _lock:
            _known = _known | {value}


def remember_in(config: object, depth: int = 0) -> None:
    """Note the secret values of a config (and of the dicts in it: headers, nested
    settings): every value under a name :func:`looks_secret` names, and every value that is
    a credential under any name (``Bearer ...``)."""
    if not isinstance(config, Mapping) or depth > 3:
        return
    for key, value in config.items():
        if looks_secret(key):
            remember(value)
        elif isinstance(value, Mapping):
            remember_in(value, depth + 1)
        elif isinstance(value, str) and CREDENTIAL_VALUE.match(value):
            remember(value)


def remember_environment() -> None:
    """Note the values of credential environment variables (``OPENAI_API_KEY``,
    ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``...): an SDK reads them when a config
    gives no key."""
    for name, value in os.environ.items():
        if _credential_variable(name):
            remember(value)


@functools.lru_cache(maxsize=1024)  # checked again each time a client is built
def _credential_variable(name: str) -> bool:
    return any(word in _ENV_WORDS for word in _words(name))


def known() -> frozenset[str]:
    """The secret values noted so far (a new set object whenever one is added, so a text
    scrubbed earlier can tell whether it must be scrubbed again)."""
    return _known


def scrub(text: str, secrets: frozenset[str] | None = None) -> str:
    """``text`` with every noted secret value (or every one of ``secrets``) replaced by
    ``<redacted>``."""
    for secret in _known if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact(text: str) -> str:
    """``text`` with every noted secret value and everything that looks like a key (see
    :data:`_KEY_PATTERNS`) replaced by ``<redacted>``: for error messages and stack traces."""
    return _KEY_PATTERNS.sub(REDACTED, scrub(text))


def _leaks(text: str) -> bool:
    return redact(text) != text


def scrubbing_errors(
    method: Callable[..., Awaitable[Any]],
) -> Callable[..., Awaitable[Any]]:
    """``method`` (a client's ``a_create``), its errors scrubbed of credentials in place,
    chained errors included (:func:`scrub_error`)."""

    @functools.wraps(method)
    async def scrubbed(*args: Any, **kwargs: Any) -> Any:
        try:
            return await method(*args, **kwargs)
        except Exception as e:
            scrub_error(e)
            raise

    scrubbed._scrubs_errors = True  # type: ignore[attr-defined]
    return scrubbed


def scrub_error(error: BaseException) -> BaseException:
    """Remove noted secrets and key-looking strings from ``error`` in place: its ``args``,
    its attributes (``message``, ``body``, ``response``, ...) and, the same way, the errors
    chained to it. Returns ``error``."""
    seen: set[int] = set()
    _scrub_one(error)
    seen.add(id(error))
    # Walk the chain iteratively, replacing a link that stays dirty after its scrub.
    stack: list[BaseException] = [error]
    while stack:
        current = stack.pop()
        for attr in ("__cause__", "__context__"):
            linked = getattr(current, attr)
            if linked is None or id(linked) in seen:
                continue
            seen.add(id(linked))
            _scrub_one(linked)
            if _dirty(linked):
                stand_in = _stand_in(linked)
                seen.add(id(stand_in))
                setattr(current, attr, stand_in)
                linked = stand_in
            stack.append(linked)
    return error


def _dirty(error: BaseException) -> bool:
    try:
        return _leaks(str(error)) or _leaks(repr(error))
    except Exception:  # a broken __str__: keep it out of the chain
        return True


def _stand_in(error: BaseException) -> RedactedError:
    try:
        text = redact(str(error))
    except Exception:
        text = "(its message could not be read)"
    stand_in = RedactedError(type(error).__qualname__, text)
    stand_in.__traceback__ = error.__traceback__
    stand_in.__cause__ = error.__cause__
    stand_in.__context__ = error.__context__
    stand_in.__suppress_context__ = error.__suppress_context__
    return stand_in


def _scrub_one(error: BaseException) -> None:
    try:
        args = tuple(_clean(a, 0) for a in error.args)
        if any(a is not b for a, b in zip(args, error.args, strict=True)):
            error.args = args
    except Exception:  # an exception type whose args cannot be set: the chain check decides
        pass
    attrs = getattr(error, "__dict__", None)
    for name, value in list(attrs.items() if isinstance(attrs, dict) else ()):
        cleaned = _clean(value, 0)
        if cleaned is not value:
            try:
                setattr(error, name, cleaned)
            except Exception:  # a read-only property: the chain check decides
                pass


_MAX_DEPTH = 6


def _clean(value: Any, depth: int) -> Any:
    """``value`` with secrets removed: the same object when there was nothing to remove, a
    cleaned copy otherwise (the caller's containers are never changed)."""
    if isinstance(value, str):
        cleaned = redact(value)
        return value if cleaned == value else cleaned
    if isinstance(value, (bytes, bytearray)):
        return _clean_bytes(bytes(value), value)
    if depth >= _MAX_DEPTH or isinstance(value, (int, float, bool)) or value is None:
        return value
    if isinstance(value, Mapping) and type(value) is dict:
        out = {
            k: (REDACTED if looks_secret(k) and isinstance(v, str) else _clean(v, depth + 1))
            for k, v in value.items()
        }
        return value if all(out[k] is value[k] for k in value) else out
    if type(value) in (list, tuple):
        items = [_clean(v, depth + 1) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items if type(value) is list else tuple(items)
    module = type(value).__module__
    if module.startswith("httpx"):
        return _clean_httpx(value)
    return value


def _clean_bytes(data: bytes, original: Any) -> Any:
    text = data.decode("utf-8", "replace")
    cleaned = redact(text)
    return original if cleaned == text else cleaned.encode("utf-8")


def _clean_httpx(value: Any) -> Any:
    """An httpx request or response without credentials: a request's secret headers (its
    ``Authorization``) and URL, a response's body and its request. A copy made with the
    classes of the value's own package (an SDK may vendor httpx under another name)."""
    package = sys.modules.get(type(value).__module__.split(".")[0])
    request_cls = getattr(package, "Request", None)
    response_cls = getattr(package, "Response", None)
    try:
        if request_cls is not None and isinstance(value, request_cls):
            return _safe_request(value, request_cls)
        if response_cls is not None and request_cls is not None and isinstance(value, response_cls):
            try:
                content = value.content
            except Exception:  # a body not read (a stream): nothing of it to show
                content = b""
            try:
                request = _safe_request(value.request, request_cls)
            except RuntimeError:  # a response made without a request
                request = None
            return response_cls(
                value.status_code,
                headers=_safe_headers(value.headers),
                content=_clean_bytes(content, content),
                request=request,
            )
    except Exception:  # an httpx of another shape: left as it is, the chain check decides
        pass
    return value


def _safe_request(request: Any, request_cls: Any) -> Any:
    return request_cls(
        request.method, redact(str(request.url)), headers=_safe_headers(request.headers)
    )


def _safe_headers(headers: Any) -> list[tuple[str, str]]:
    return [
        (name, REDACTED if looks_secret(name) else redact(value)) for name, value in headers.items()
    ]
