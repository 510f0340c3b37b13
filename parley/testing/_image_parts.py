"""Image content parts as OpenAI's chat API takes them: the strict checks of an
``image_url`` part, and the images of a request, for tests to assert that an image reached the
model.

OpenAI accepts an image as an http(s) URL (it downloads it) or a base64 data URI of a PNG,
JPEG, GIF or WEBP image, with an optional ``detail`` of ``auto``, ``low`` or ``high``, and
only in user messages. The fake cannot download, so a well-formed http(s) URL is accepted as
it is; a data URI's bytes must be an image of those types (checked by their signature, so the
testing package needs no Pillow).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["Problem", "image_part_problem", "image_urls"]

_DETAILS = ("auto", "low", "high")
_HTTP_URL = re.compile(r"^https?://[^\s/?#]+[^\s]*$", re.IGNORECASE)
_DATA_URI = re.compile(r"^data:(?P<mime>[^;,]*)(?P<b64>;base64)?,(?P<data>.*)$", re.DOTALL)
_IMAGE_MIMES = ("image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp")


Problem = tuple[str, str | None, str | None]


class _Refused(Exception):
    def __init__(self, message: str, param: str | None, code: str | None = "invalid_value"):
        super().__init__(message)
        self.problem: Problem = (message, param, code)


def image_part_problem(part: Mapping[str, Any], role: Any, here: str) -> Problem | None:
    """What OpenAI's API answers (message, param, code) to the ``image_url`` part ``part`` at
    ``here`` (``messages.[i].content.[k]``) of a message with ``role``; None if it is fine."""
    try:
        _check(part, role, here)
    except _Refused as e:
        return e.problem
    return None


def _check(part: Mapping[str, Any], role: Any, here: str) -> None:
    if role != "user":
        raise _Refused(
            f"Image URLs are only allowed for messages with role 'user', but this message with "
            f"role '{role}' contains an image URL.",
            f"{here}.type",
        )
    image = part.get("image_url")
    if image is None:
        raise _Refused(
            f"Missing required parameter: '{here}.image_url'.",
            f"{here}.image_url",
            "missing_required_parameter",
        )
    if not isinstance(image, Mapping):
        raise _Refused(
            f"Invalid type for '{here}.image_url': expected an object, but got "
            f"{type(image).__name__} instead.",
            f"{here}.image_url",
            "invalid_type",
        )
    url = image.get("url")
    where = f"{here}.image_url.url"
    if url is None:
        raise _Refused(
            f"Missing required parameter: '{where}'.", where, "missing_required_parameter"
        )
    if not isinstance(url, str):
        raise _Refused(
            f"Invalid type for '{where}': expected a string, but got {type(url).__name__} instead.",
            where,
            "invalid_type",
        )
    detail = image.get("detail")
    if detail is not None and detail not in _DETAILS:
        raise _Refused(
            f"Invalid value: {detail!r}. Supported values are: 'auto', 'low', and 'high'.",
            f"{here}.image_url.detail",
        )
    if _HTTP_URL.match(url):
        return
    data_uri = _DATA_URI.match(url)
    if data_uri is None:
        raise _Refused(
            f"Invalid '{where}'. Expected a valid URL, but got a value with an invalid format.",
            where,
        )
    mime = data_uri.group("mime").lower()
    if mime not in _IMAGE_MIMES or not data_uri.group("b64"):
        raise _Refused(
            f"Invalid '{where}'. Expected a base64-encoded data URL with an image MIME type (e.g. "
            f"'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got unsupported MIME type "
            f"'{mime}'.",
            where,
        )
    try:
        data = base64.b64decode(data_uri.group("data"), validate=True)
    except (binascii.Error, ValueError):
        data = b""
    if not _is_image(data):
        raise _Refused(
            "You uploaded an unsupported image. Please make sure your image has of one the "
            "following formats: ['png', 'jpeg', 'gif', 'webp'].",
            None,
            "invalid_image_format",
        )


def _is_image(data: bytes) -> bool:
    return data.startswith((b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")) or (
        data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    )


def image_urls(body: Any) -> list[str]:
    """The ``url`` of every ``image_url`` part in a chat request's messages, in order (data
    URIs as sent); ``[]`` for a body without messages."""
    messages = body.get("messages") if isinstance(body, Mapping) else None
    urls: list[str] = []
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, Mapping) else None
        for part in content if isinstance(content, list) else ():
            if isinstance(part, Mapping) and part.get("type") == "image_url":
                image = part.get("image_url")
                url = image.get("url") if isinstance(image, Mapping) else None
                if isinstance(url, str):
                    urls.append(url)
    return urls
