"""What a failed model request's error means, decided once for every path that reacts to it.

:func:`classify` reads an error (the openai SDK's, a parley :class:`~parley.exceptions.ModelAPIError`
of a native client, or any other) into an :class:`ErrorKind`: its :class:`Cause`, the HTTP
status and headers, and whether the server hinted (``x-should-retry``). Each path asks the
kind one question:

- ``retry``: the client's retry loop (:mod:`parley.oai._retry`) sends the same request to
  the same config again;
- ``fall_back``: the config list (:mod:`parley.oai._fallback`, the legacy ``Completion``)
  moves on to the next config;
- ``transient``: a batch (:mod:`parley.batch`) runs the whole chat again later;
- ``fatal``: none of these.

The rules, and why they nest (retry implies fall back and transient):

- Only an error a model API client raised (the openai SDK's, a ``ModelAPIError``) is retried
  or moved past; a plain ``ConnectionError`` or ``TimeoutError`` from user code (a custom
  model client, a filter) propagates as it is. A batch, which reruns a whole chat, counts a
  plain connection failure or timeout as transient too.
- A content filter's refusal is fatal everywhere: the same text meets the same filter.
- ``x-should-retry`` from the server decides ``retry`` when present (the openai SDK's own
  rule). A "true" also makes the error a reason to fall back and transient, so that anything
  worth retrying on one config is worth trying on another, and later.
- Unreachable, timed out, throttled (429), busy (408, 409), a server error (5xx) or an answer
  that is no reply (:class:`~parley.exceptions.MalformedResponseError`): retried, moved past,
  transient.
- Refused (401, 403, 404: this key, endpoint or model will not serve it; another may): moved
  past, but neither retried nor transient.
- Any other 4xx (the request itself is wrong), any other error: fatal.

The status decides over the error's class (a ``BadRequestError`` with 404 is "refused"); the
class decides when no status came (a ``RateLimitError`` without one is "throttled").
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..exceptions import (
    AllConfigsFailedError,
    AuthenticationError,
    MalformedResponseError,
    ModelAPIError,
    ModelConnectionError,
    ModelServerError,
    RateLimitError,
)

__all__ = ["Cause", "ErrorKind", "classify", "is_transient"]


class Cause(enum.Enum):
    """What went wrong, as far as the error tells."""

    UNREACHABLE = "unreachable"  # no answer: connection refused, reset, failed
    TIMEOUT = "timeout"  # no answer in time
    THROTTLED = "throttled"  # 429, a rate limit
    BUSY = "busy"  # 408, 409: the server asks for the request again
    SERVER = "server"  # 5xx: the server failed
    MALFORMED = "malformed"  # an answer that is no reply
    REFUSED = "refused"  # 401, 403, 404: not this key, endpoint or model
    CONTENT_FILTER = "content_filter"  # the provider's content filter refused the text
    REQUEST = "request"  # another 4xx: the request itself is wrong
    OTHER = "other"  # not an error of a model API


# Later may work: the same request to the same server, once it recovers.
_AGAIN = frozenset(
    {
        Cause.UNREACHABLE,
        Cause.TIMEOUT,
        Cause.THROTTLED,
        Cause.BUSY,
        Cause.SERVER,
        Cause.MALFORMED,
    }
)
# Another config (endpoint, key, model) may work.
_ELSEWHERE = _AGAIN | {Cause.REFUSED}

_BY_STATUS = {
    401: Cause.REFUSED,
    403: Cause.REFUSED,
    404: Cause.REFUSED,
    408: Cause.BUSY,
    409: Cause.BUSY,
    429: Cause.THROTTLED,
}


@dataclass(frozen=True, slots=True)
class ErrorKind:
    """One error, classified: see the module's docstring for the rules.

    ``api`` says whether a model API client raised it; ``hint`` is the server's
    ``x-should-retry`` (None when absent); ``headers`` the response's (empty when none came).
    """

    cause: Cause
    api: bool
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    hint: bool | None = None

    @property
    def retry(self) -> bool:
        """Whether sending the same request to the same config again may succeed."""
        if not self.api or self.cause is Cause.CONTENT_FILTER:
            return False
        if self.cause in (Cause.UNREACHABLE, Cause.TIMEOUT) or self.hint is None:
            return self.cause in _AGAIN
        return self.hint

    @property
    def fall_back(self) -> bool:
        """Whether another config may succeed where this error ended one."""
        return self.retry or (self.api and self.cause in _ELSEWHERE)

    @property
    def transient(self) -> bool:
        """Whether the same work, run again later, may succeed."""
        return self.retry or self.cause in _AGAIN

    @property
    def fatal(self) -> bool:
        """Whether nothing may help: not retried, no other config, not later."""
        return not (self.fall_back or self.transient)

    @property
    def reason(self) -> str:
        """The classification in words, for a log line."""
        status = "" if self.status is None else f" ({self.status})"
        hint = "" if self.hint is None else f", server says retry={str(self.hint).lower()}"
        return f"{self.cause.value}{status}{hint}"


def classify(error: BaseException) -> ErrorKind:
    """The :class:`ErrorKind` of ``error``; never raises."""
    if isinstance(error, ModelAPIError):
        return _kind(_provider_cause(error), True, error.status_code, error.headers)
    status, headers = _status_and_headers(error)
    import openai  # a dependency of parley, imported by the time a request failed

    if isinstance(error, openai.APIError):
        return _kind(_openai_cause(error, status), True, status, headers)
    if isinstance(error, TimeoutError):  # asyncio's too
        cause = Cause.TIMEOUT
    elif isinstance(error, ConnectionError):
        cause = Cause.UNREACHABLE
    elif status is not None:  # another library's HTTP error
        cause = _status_cause(status, getattr(error, "code", None))
    else:
        cause = Cause.OTHER
    return _kind(cause, False, status, headers)


def is_transient(error: BaseException) -> bool:
    """Whether ``error`` is transient (:attr:`ErrorKind.transient`); an
    :class:`AllConfigsFailedError` is when every config failed transiently."""
    if isinstance(error, AllConfigsFailedError):
        return bool(error.failures) and all(is_transient(f.error) for f in error.failures)
    return classify(error).transient


def _kind(cause: Cause, api: bool, status: int | None, headers: Mapping[str, str]) -> ErrorKind:
    hint = headers.get("x-should-retry")
    said = hint == "true" if hint in ("true", "false") else None
    return ErrorKind(cause, api, status, headers, said)


def _provider_cause(error: ModelAPIError) -> Cause:
    if isinstance(error, ModelConnectionError):
        return Cause.UNREACHABLE
    if isinstance(error, MalformedResponseError):
        return Cause.MALFORMED
    if error.status_code is not None:
        return _status_cause(error.status_code, error.code)
    if error.code == "content_filter":
        return Cause.CONTENT_FILTER
    if isinstance(error, RateLimitError):
        return Cause.THROTTLED
    if isinstance(error, ModelServerError):
        return Cause.SERVER
    if isinstance(error, AuthenticationError):
        return Cause.REFUSED
    return Cause.REQUEST


def _openai_cause(error: BaseException, status: int | None) -> Cause:
    import openai

    if isinstance(error, openai.APITimeoutError):
        return Cause.TIMEOUT
    if isinstance(error, openai.APIConnectionError):
        return Cause.UNREACHABLE
    if isinstance(error, openai.APIResponseValidationError):
        return Cause.MALFORMED
    if isinstance(error, openai.APIStatusError) and status is not None:
        return _status_cause(status, getattr(error, "code", None))
    return Cause.OTHER


def _status_cause(status: int, code: object) -> Cause:
    if code == "content_filter":
        return Cause.CONTENT_FILTER
    if status >= 500:
        return Cause.SERVER
    return _BY_STATUS.get(status, Cause.REQUEST)


def _status_and_headers(error: BaseException) -> tuple[int | None, Mapping[str, str]]:
    status = getattr(error, "status_code", None)
    headers = getattr(getattr(error, "response", None), "headers", None)
    return (
        status if isinstance(status, int) and not isinstance(status, bool) else None,
        headers if isinstance(headers, Mapping) else {},
    )
