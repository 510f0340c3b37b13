"""boto3's errors of a Bedrock call as parley's :class:`~parley.exceptions.ModelAPIError` tree,
so that retry and fallback treat Bedrock as they treat every provider.

AWS names an error by its code (``ThrottlingException``), which says more than the HTTP status
(a model that is not ready answers 429 too, and an error inside a stream comes with the
stream's 200): the code picks the class, and the status the code stands for is used when the
response has no error status of its own. Messages carry AWS's message and code, never a
credential (boto3's messages do not echo them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...exceptions import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ModelAPIError,
    ModelServerError,
    ParleyError,
    RateLimitError,
)
from .._reply_checks import malformed
from .._retry import parse_retry_after
from ._base import api_error, require

__all__ = ["PROVIDER", "bedrock_error"]

PROVIDER = "bedrock"

# AWS error code -> (class, the HTTP status AWS sends it with).
_CODES: dict[str, tuple[type[ModelAPIError], int]] = {
    "ThrottlingException": (RateLimitError, 429),
    "TooManyRequestsException": (RateLimitError, 429),
    "ServiceQuotaExceededException": (RateLimitError, 429),
    "ValidationException": (BadRequestError, 400),
    "ResourceNotFoundException": (BadRequestError, 404),
    "AccessDeniedException": (AuthenticationError, 403),
    "UnrecognizedClientException": (AuthenticationError, 403),
    "InvalidSignatureException": (AuthenticationError, 403),
    "ExpiredTokenException": (AuthenticationError, 403),
    "ModelNotReadyException": (ModelServerError, 429),
    "ModelTimeoutException": (ModelServerError, 408),
    "ModelErrorException": (ModelServerError, 424),
    "ModelStreamErrorException": (ModelServerError, 424),
    "InternalServerException": (ModelServerError, 500),
    "ServiceUnavailableException": (ModelServerError, 503),
}


def _client_error(response: Mapping[str, Any]) -> ModelAPIError:
    error = response.get("Error") or {}
    code = str(error.get("Code") or "") or None
    message = str(error.get("Message") or code or "request failed")
    meta = response.get("ResponseMetadata") or {}
    headers = {str(k).lower(): str(v) for k, v in (meta.get("HTTPHeaders") or {}).items()}
    status = meta.get("HTTPStatusCode")
    status = status if isinstance(status, int) and status >= 400 else None
    text = f"{code}: {message}" if code and code not in message else message
    known = _CODES.get(code or "")
    if known is None:
        return api_error(PROVIDER, text, status=status, headers=headers, code=code)
    cls, usual = known
    return cls(
        text,
        provider=PROVIDER,
        status_code=status or usual,
        headers=headers,
        code=code,
        retry_after=parse_retry_after(headers),
    )


def bedrock_error(error: Exception) -> ParleyError | None:
    """The error to raise ``from error`` (None if it is none of boto3's)."""
    boto = require("botocore.exceptions", PROVIDER)

    if isinstance(error, boto.ClientError):
        return _client_error(error.response)
    # An answer botocore cannot parse (a stream that is no AWS event stream, a body that is
    # not the JSON the API defines): no reply.
    parse_errors = (
        require("botocore.eventstream", PROVIDER).ParserError,
        require("botocore.parsers", PROVIDER).ResponseParserError,
    )
    if isinstance(error, parse_errors):
        return malformed(PROVIDER, f"{type(error).__name__}: {error}")
    if isinstance(error, (boto.NoCredentialsError, boto.PartialCredentialsError)):
        return AuthenticationError(
            f"{error} (give aws_access_key and aws_secret_key, or configure boto3's "
            "credential chain: AWS_PROFILE, ~/.aws/credentials, an instance role)",
            provider=PROVIDER,
        )
    if isinstance(error, boto.NoRegionError):
        return ConfigError("bedrock needs a region: give aws_region, or set AWS_REGION")
    if isinstance(error, boto.ProfileNotFound):
        return ConfigError(f"bedrock: {error}")
    return None
