"""Images in messages (AutoGen's ``autogen.agentchat.contrib.img_utils``): loading them,
encoding them as base64 or data URIs, and turning ``<img ...>`` tags in text into the
content parts of OpenAI's multimodal messages.

Needs Pillow: ``pip install 'parley[lmm]'``. An image is named by a local path, a
``data:image/...;base64,`` URI, raw base64 text, a PIL image, or an http(s) URL. **URLs are
fetched only when allowed** — :func:`allow_image_downloads` or the environment variable
``PARLEY_ALLOW_IMAGE_DOWNLOADS=1`` — so that neither a notebook nor a model's message makes
parley reach the network on its own; otherwise loading one raises
:class:`~parley.exceptions.ImageDownloadNotAllowedError` saying how to allow it.

Differences from AutoGen, on purpose: a failed load raises
:class:`~parley.exceptions.ImageLoadError` (a ValueError) naming the source and the cause;
downloads have a timeout (:data:`DOWNLOAD_TIMEOUT`) and a size limit; every data URI of an image
type is read (not only PNG and JPEG); :func:`message_formatter_pil_to_b64` leaves an image that
is already a URL string as it is (AutoGen raised ``AttributeError``) and never modifies the
messages it is given; the warnings about images that cannot be loaded go to the current
``IOStream`` instead of a bare ``print``.
"""

from __future__ import annotations

import base64
import io
import re
from typing import TYPE_CHECKING, Any

from ...exceptions import ImageLoadError
from ._images import (
    DOWNLOAD_ENV,
    DOWNLOAD_TIMEOUT,
    MAX_DOWNLOAD_BYTES,
    allow_image_downloads,
    decode_base64,
    image_downloads_allowed,
    load_image,
    pil,
    sniff_mime,
)

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = [
    "DOWNLOAD_ENV",
    "DOWNLOAD_TIMEOUT",
    "MAX_DOWNLOAD_BYTES",
    "allow_image_downloads",
    "convert_base64_to_data_uri",
    "extract_img_paths",
    "get_image_data",
    "get_pil_image",
    "gpt4v_formatter",
    "image_downloads_allowed",
    "llava_formatter",
    "message_formatter_pil_to_b64",
    "pil_to_data_uri",
]

_IMG_FORMATS = ("uri", "url", "pil")
# What loading an image may raise: parley's ImageLoadError (a bad source, a refused download)
# and, from a file system failing while a file is read, OSError.
_LOAD_ERRORS = (ImageLoadError, OSError)
_IMG_PATH = re.compile(
    r"\b(?:http[s]?://\S+\.(?:jpg|jpeg|png|gif|bmp)|\S+\.(?:jpg|jpeg|png|gif|bmp))\b",
    re.IGNORECASE,
)


def get_pil_image(image_file: str | Image) -> Image:
    """The image as an RGB PIL image. A PIL image is returned as it is; a str is stripped of
    one pair of surrounding quotes and read as an http(s) URL (fetched only if
    :func:`image_downloads_allowed`), a ``data:image/...;base64,`` URI, a local file, or raw
    base64 text, in that order. :class:`~parley.exceptions.ImageLoadError` if it cannot be
    loaded."""
    return load_image(image_file)


def get_image_data(image_file: str | Image, use_b64: bool = True) -> bytes | str:
    """The image (as :func:`get_pil_image` loads it) encoded as PNG: base64 text if
    ``use_b64``, else the PNG's bytes."""
    png = _png_bytes(get_pil_image(image_file))
    return base64.b64encode(png).decode("utf-8") if use_b64 else png


def _png_bytes(image: Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _to_pil(data: str) -> Image:
    """Base64 text of an image file as a PIL image (not converted to RGB)."""
    image: Image = pil().open(io.BytesIO(decode_base64(data)))
    return image


def convert_base64_to_data_uri(base64_image: str) -> str:
    """A data URI for base64 image data, its MIME type sniffed from the bytes (PNG, JPEG, GIF,
    WEBP; anything else is called JPEG, as AutoGen does)."""
    try:
        # 64 base64 characters are 48 whole bytes: enough for every signature.
        head = decode_base64(base64_image[:64])
    except ValueError:
        head = b""
    mime = sniff_mime(head) or "image/jpeg"
    return f"data:{mime};base64,{base64_image}"


def pil_to_data_uri(image: Image) -> str:
    """The image as a PNG data URI (``data:image/png;base64,...``)."""
    return "data:image/png;base64," + base64.b64encode(_png_bytes(image)).decode("utf-8")


def _warn_unloadable(src: str, error: BaseException) -> None:
    from ...io import IOStream

    IOStream.get_default().print(f"Warning! Unable to load image from {src}, because {error}")


def gpt4v_formatter(prompt: str, img_format: str = "uri") -> list[dict[str, Any]]:
    """``prompt`` as OpenAI content parts, each ``<img src>`` tag an ``image_url`` part.

    ``img_format``: ``"uri"`` (the image loaded and sent as a PNG data URI), ``"url"`` (the
    ``src`` as written, nothing loaded) or ``"pil"`` (the loaded PIL image, as
    ``MultimodalConversableAgent`` stores it). Text and image parts alternate, starting and
    ending with a text part, possibly empty: ``"<img a.png>"`` gives ``["", image, ""]``. A tag
    whose image cannot be loaded (including a URL while downloads are not allowed) is reported
    on the console and stays in the text. The tag grammar is
    :func:`parley.agentchat.utils.parse_tags_from_content`'s.
    """
    from ..utils import parse_tags_from_content

    if img_format not in _IMG_FORMATS:
        raise AssertionError("img_format must be either 'uri', 'url' or 'pil'")
    output: list[dict[str, Any]] = []
    last_index = 0
    for tag in parse_tags_from_content("img", prompt):
        src = tag["attr"].get("src")
        if not src:
            continue  # <img alt="..."> names no image: it is text
        image: Any = src
        try:
            # Through the module's get_image_data / get_pil_image, looked up at each call, as
            # AutoGen's: code that patches either sees its stand-in used.
            if img_format == "uri":
                image = convert_base64_to_data_uri(str(get_image_data(src)))
            elif img_format == "pil":
                image = get_pil_image(src)
        except _LOAD_ERRORS as e:
            _warn_unloadable(src, e)
            continue
        match = tag["match"]
        output.append({"type": "text", "text": prompt[last_index : match.start()]})
        output.append({"type": "image_url", "image_url": {"url": image}})
        last_index = match.end()
    output.append({"type": "text", "text": prompt[last_index:]})
    return output


def llava_formatter(prompt: str, order_image_tokens: bool = False) -> tuple[str, list[str]]:
    """``prompt`` for LLaVA: each loadable ``<img src>`` tag becomes ``<image>`` (``<image 0>``,
    ``<image 1>``... with ``order_image_tokens``), and the images, as base64 PNG, in order.
    A tag whose image cannot be loaded is reported and removed."""
    from ..utils import parse_tags_from_content

    images: list[str] = []
    pieces: list[str] = []
    last_index = 0
    for tag in parse_tags_from_content("img", prompt):
        match = tag["match"]
        pieces.append(prompt[last_index : match.start()])
        last_index = match.end()
        src = tag["attr"].get("src", "")
        try:
            data = get_image_data(src)
        except _LOAD_ERRORS as e:
            _warn_unloadable(src, e)
            continue
        assert isinstance(data, str)
        pieces.append(f"<image {len(images)}>" if order_image_tokens else "<image>")
        images.append(data)
    pieces.append(prompt[last_index:])
    return "".join(pieces), images


def extract_img_paths(paragraph: str) -> list[str]:
    """The image URLs and file paths (ending in jpg, jpeg, png, gif or bmp, any case) in
    ``paragraph``, in order."""
    return _IMG_PATH.findall(paragraph)


def message_formatter_pil_to_b64(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with each PIL image of their content parts turned into a PNG data URI, as
    a request needs them. Messages and parts that change are copies; the caller's are left as
    they are."""
    Image = pil()
    formatted: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            formatted.append(message)
            continue
        parts = []
        for part in content:
            image_url = part.get("image_url") if isinstance(part, dict) else None
            if (
                isinstance(image_url, dict)
                and part.get("type") == "image_url"
                and isinstance(image_url.get("url"), Image.Image)
            ):
                part = {
                    **part,
                    "image_url": {**image_url, "url": pil_to_data_uri(image_url["url"])},
                }
            parts.append(part)
        formatted.append({**message, "content": parts})
    return formatted
