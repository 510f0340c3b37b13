"""Telling "no answer came" apart from other failures, for the native clients whose SDKs let
their HTTP library's errors through (httpx, aiohttp, urllib3 through botocore), without
importing those libraries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["header_dict", "is_connection_failure"]

# Base classes of the HTTP libraries' "the connection failed or timed out" errors, by module
# and name.
_TRANSPORT_BASES = frozenset(
    {
        ("httpx", "TransportError"),
        ("httpx", "TimeoutException"),
        ("aiohttp.client_exceptions", "ClientConnectionError"),
        ("aiohttp.client_exceptions", "ClientPayloadError"),
        ("botocore.exceptions", "ConnectionError"),
        ("botocore.exceptions", "HTTPClientError"),
        # What a botocore stream's body raises while it is read.
        ("urllib3.exceptions", "ProtocolError"),
        ("urllib3.exceptions", "TimeoutError"),
    }
)


def is_connection_failure(error: BaseException) -> bool:
    """Whether ``error`` says the server could not be reached, or went away or silent."""
    if isinstance(error, (TimeoutError, ConnectionError)):
        return True
    for cls in type(error).__mro__:
        module = cls.__module__
        if module.startswith("httpx"):
            module = "httpx"
        if (module, cls.__name__) in _TRANSPORT_BASES:
            return True
    return False


def header_dict(headers: Any) -> dict[str, str]:
    """A response's headers (httpx's, aiohttp's, a dict) as a plain dict of str."""
    if headers is None:
        return {}
    items = headers.items() if isinstance(headers, Mapping) or hasattr(headers, "items") else ()
    return {str(k): str(v) for k, v in items}
