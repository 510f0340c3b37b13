"""Loading one image from what a message may name: a PIL image, a local file, a data URI, raw
base64 text, or an http(s) URL — the last only when the user allowed downloads.

Pillow is imported on first use (the ``lmm`` extra). URLs are not fetched by default: parley
reaches no network on its own, and a message written by a model must not make it do so. A
process allows it with :func:`allow_image_downloads` or the environment variable
``PARLEY_ALLOW_IMAGE_DOWNLOADS=1``.
"""

from __future__ import annotations

import base64
import binascii
import io
import os
import re
from typing import TYPE_CHECKING, Any

from ...exceptions import ImageDownloadNotAllowedError, ImageLoadError

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = [
    "DOWNLOAD_ENV",
    "DOWNLOAD_TIMEOUT",
    "MAX_DOWNLOAD_BYTES",
    "allow_image_downloads",
    "decode_base64",
    "image_downloads_allowed",
    "load_image",
    "pil",
    "sniff_mime",
]

DOWNLOAD_ENV = "PARLEY_ALLOW_IMAGE_DOWNLOADS"
DOWNLOAD_TIMEOUT = 30.0
"""Seconds an image download may take (AutoGen waited forever)."""
MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024
"""OpenAI's limit for one image; a larger download is refused rather than kept in memory."""

_DATA_URI = re.compile(r"^data:image/[A-Za-z0-9.+-]+;base64,", re.IGNORECASE)
_allowed: bool | None = None  # None: the environment variable decides


def pil() -> Any:
    """The ``PIL.Image`` module, or an ImportError naming the extra to install."""
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError(
            "images in messages need Pillow: pip install 'parley[lmm]' (or 'parley[multimodal]')"
        ) from e
    return Image


def allow_image_downloads(allowed: bool | None = True) -> None:
    """Let this process fetch images named by http(s) URLs. ``False`` forbids it whatever the
    environment says; ``None`` leaves it to the environment variable again."""
    global _allowed
    _allowed = None if allowed is None else bool(allowed)


def image_downloads_allowed() -> bool:
    """Whether an http(s) image URL may be fetched: :func:`allow_image_downloads` decides if it
    was called, else the environment variable ``PARLEY_ALLOW_IMAGE_DOWNLOADS`` (``1``, ``true``,
    ``yes``)."""
    if _allowed is not None:
        return _allowed
    return os.environ.get(DOWNLOAD_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def sniff_mime(data: bytes) -> str | None:
    """The MIME type of image bytes by their signature (PNG, JPEG, GIF, WEBP), else None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def decode_base64(text: str) -> bytes:
    """Strict base64 (whitespace and missing padding tolerated); binascii.Error otherwise."""
    compact = "".join(text.split())
    compact += "=" * (-len(compact) % 4)
    return base64.b64decode(compact, validate=True)


def _open(data: bytes, what: str) -> Image:
    module = pil()
    try:
        with module.open(io.BytesIO(data)) as image:
            image.load()
            converted: Image = image.convert("RGB")
            return converted
    except module.UnidentifiedImageError as e:
        # Pillow's own text names a BytesIO object, which tells the user nothing.
        raise ImageLoadError(f"{what} is not in an image format Pillow reads") from e
    except (OSError, ValueError, module.DecompressionBombError) as e:
        raise ImageLoadError(f"{what} is not an image Pillow can read: {e}") from e


def _download(url: str) -> bytes:
    import urllib.error
    import urllib.request

    if not image_downloads_allowed():
        raise ImageDownloadNotAllowedError(
            f"image URL {url!r} was not fetched: parley downloads images only when allowed. "
            "Call parley.agentchat.contrib.img_utils.allow_image_downloads() or set the "
            f"environment variable {DOWNLOAD_ENV}=1 to allow it, or give the image as a file "
            "path or data URI."
        )
    request = urllib.request.Request(url, headers={"User-Agent": "parley"})
    try:
        with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT) as response:
            data: bytes = response.read(MAX_DOWNLOAD_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise ImageLoadError(f"could not download the image at {url!r}: {e}") from e
    if len(data) > MAX_DOWNLOAD_BYTES:
        raise ImageLoadError(
            f"the image at {url!r} is larger than {MAX_DOWNLOAD_BYTES} bytes; not loaded"
        )
    return data


def _strip_quotes(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def load_image(source: Any) -> Image:
    """``source`` as an RGB PIL image (a PIL image is returned as it is, unconverted).

    ``source``: a PIL image, a path (str or ``os.PathLike``), an http(s) URL (fetched only if
    allowed), a ``data:image/...;base64,`` URI, or raw base64 text; one pair of surrounding
    quotes is stripped. :class:`ImageLoadError` (a ValueError) says what failed;
    :class:`ImageDownloadNotAllowedError` (one of them) for a URL while downloads are off.
    """
    if isinstance(source, pil().Image):
        image: Image = source
        return image
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str):
        raise ImageLoadError(
            "an image must be a PIL image, a file path, a URL, a data URI or base64 text, "
            f"got {type(source).__name__}"
        )
    text = _strip_quotes(source.strip())
    if text.startswith(("http://", "https://")):
        return _open(_download(text), f"the download from {text!r}")
    data_uri = _DATA_URI.match(text)
    if data_uri:
        try:
            return _open(decode_base64(text[data_uri.end() :]), "the data URI's content")
        except binascii.Error as e:
            raise ImageLoadError(f"the data URI's content is not valid base64: {e}") from e
    if os.path.isfile(text):
        with open(text, "rb") as f:
            return _open(f.read(), f"the file {text!r}")
    shown = text if len(text) <= 80 else text[:77] + "..."
    try:
        data = decode_base64(text)
    except binascii.Error:
        data = b""
    if not data:
        raise ImageLoadError(
            f"cannot load an image from {shown!r}: no such file, and it is not an http(s) URL, "
            "a data:image/...;base64, URI or base64 text"
        )
    try:
        return _open(data, "the base64 text")
    except ImageLoadError as e:
        raise ImageLoadError(
            f"cannot load an image from {shown!r}: no such file, and read as base64 text it "
            "is not an image either"
        ) from e.__cause__
