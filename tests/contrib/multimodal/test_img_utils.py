"""img_utils (website/docs/multimodal.md): loading images, round trips through base64 and data URIs,
``<img>`` tags turned into content parts, and URLs fetched only when allowed."""

from __future__ import annotations

import base64
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parley.agentchat.contrib import img_utils
from parley.agentchat.contrib.img_utils import (
    _to_pil,
    convert_base64_to_data_uri,
    extract_img_paths,
    get_image_data,
    get_pil_image,
    gpt4v_formatter,
    llava_formatter,
    message_formatter_pil_to_b64,
    pil_to_data_uri,
)
from parley.exceptions import ImageDownloadNotAllowedError, ImageLoadError
from parley.io import IOScripted, IOStream

from ..._loopback_http import QuietHandler, serving
from .conftest import same_pixels

# -- loading -----------------------------------------------------------------------------------


def test_a_pil_image_is_returned_as_it_is(picture: Any) -> None:
    rgba = picture.convert("RGBA")
    assert get_pil_image(rgba) is rgba


def test_a_file_loads_as_rgb(tmp_path: Path, picture: Any) -> None:
    path = tmp_path / "p.png"
    picture.convert("RGBA").save(path)
    loaded = get_pil_image(str(path))
    assert loaded.mode == "RGB"
    assert same_pixels(loaded, picture)
    assert same_pixels(get_pil_image(path), picture)  # an os.PathLike too
    assert same_pixels(get_pil_image(f'"{path}"'), picture)  # one pair of quotes stripped
    assert same_pixels(get_pil_image(f"'{path}'"), picture)


def test_data_uris_and_raw_base64_round_trip(picture: Any) -> None:
    uri = pil_to_data_uri(picture)
    assert uri.startswith("data:image/png;base64,")
    assert same_pixels(get_pil_image(uri), picture)
    b64 = get_image_data(picture)
    assert isinstance(b64, str)
    assert same_pixels(get_pil_image(b64), picture)
    assert same_pixels(_to_pil(b64), picture)
    png = get_image_data(picture, use_b64=False)
    assert isinstance(png, bytes)
    assert png.startswith(b"\x89PNG")
    assert base64.b64decode(b64) == png


def test_a_jpeg_data_uri_loads(picture: Any) -> None:
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG")
    uri = "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()
    assert get_pil_image(uri).size == picture.size


def test_to_pil_keeps_the_mode(picture: Any) -> None:
    buffer = io.BytesIO()
    picture.convert("L").save(buffer, format="PNG")
    assert _to_pil(base64.b64encode(buffer.getvalue()).decode()).mode == "L"


@settings(max_examples=25, deadline=None)
@given(
    width=st.integers(1, 12),
    height=st.integers(1, 12),
    seed=st.binary(min_size=3, max_size=3),
)
def test_png_round_trips_keep_every_pixel(width: int, height: int, seed: bytes) -> None:
    from PIL import Image

    pixels = bytes((seed[i % 3] * (i + 1)) % 256 for i in range(width * height * 3))
    image = Image.frombytes("RGB", (width, height), pixels)
    assert get_pil_image(pil_to_data_uri(image)).tobytes() == pixels
    assert get_pil_image(get_image_data(image)).tobytes() == pixels


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (b"\x89PNG\r\n\x1a\n" + b"\0" * 8, "image/png"),
        (b"\xff\xd8\xff\xe0" + b"\0" * 8, "image/jpeg"),
        (b"GIF89a" + b"\0" * 8, "image/gif"),
        (b"RIFF\0\0\0\0WEBPVP8 ", "image/webp"),
        (b"something else", "image/jpeg"),
    ],
)
def test_convert_base64_to_data_uri_sniffs_the_type(data: bytes, mime: str) -> None:
    b64 = base64.b64encode(data).decode()
    assert convert_base64_to_data_uri(b64) == f"data:{mime};base64,{b64}"


def test_a_missing_file_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A relative path: the message shortens a long source (it may be megabytes of base64), and
    # the absolute tmp_path of a parallel worker is long enough to lose the file's name.
    monkeypatch.chdir(tmp_path)
    missing = Path("nowhere") / "cat.png"
    with pytest.raises(ImageLoadError, match=r"cannot load an image from .*cat\.png.*no such file"):
        get_pil_image(str(missing))
    with pytest.raises(ValueError, match="no such file"):  # an ImageLoadError is a ValueError
        get_image_data("cat.png")


def test_a_file_that_is_not_an_image_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.png"
    path.write_text("just text")
    with pytest.raises(ImageLoadError, match=r"the file .*notes\.png.* is not in an image format"):
        get_pil_image(str(path))


def test_bad_data_uris_are_clear_errors() -> None:
    with pytest.raises(ImageLoadError, match="not valid base64"):
        get_pil_image("data:image/png;base64,@@@")
    not_image = base64.b64encode(b"hello world, no image").decode()
    with pytest.raises(ImageLoadError, match="data URI's content is not in an image format"):
        get_pil_image("data:image/png;base64," + not_image)
    with pytest.raises(ImageLoadError, match="got int"):
        get_pil_image(3)  # type: ignore[arg-type]


def test_without_pillow_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r"pip install 'parley\[lmm\]'"):
        get_pil_image("picture.png")


# -- URLs: only when allowed ---------------------------------------------------------------------


@pytest.fixture
def image_server(picture: Any) -> Iterator[str]:
    """A loopback HTTP server: /picture.png is the picture, anything else a 404."""
    png = get_image_data(picture, use_b64=False)

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            if self.path == "/picture.png":
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(png)))
                self.end_headers()
                self.wfile.write(png)  # type: ignore[arg-type]
            else:
                self.send_error(404)

    with serving(Handler) as url:
        yield url


def test_a_url_is_refused_by_default_and_the_error_says_how_to_allow(image_server: str) -> None:
    assert not img_utils.image_downloads_allowed()
    with pytest.raises(ImageDownloadNotAllowedError) as caught:
        get_pil_image(f"{image_server}/picture.png")
    message = str(caught.value)
    assert "allow_image_downloads()" in message
    assert "PARLEY_ALLOW_IMAGE_DOWNLOADS=1" in message
    assert isinstance(caught.value, ImageLoadError)


def test_an_allowed_url_is_downloaded(image_server: str, picture: Any) -> None:
    img_utils.allow_image_downloads()
    assert same_pixels(get_pil_image(f"{image_server}/picture.png"), picture)
    parts = gpt4v_formatter(f"see <img {image_server}/picture.png>")
    assert same_pixels(get_pil_image(parts[1]["image_url"]["url"]), picture)
    with pytest.raises(ImageLoadError, match=r"could not download .*/missing\.png.*404"):
        get_pil_image(f"{image_server}/missing.png")


def test_the_environment_variable_allows_and_a_call_overrides_it(
    image_server: str, picture: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(img_utils.DOWNLOAD_ENV, "1")
    assert same_pixels(get_pil_image(f"{image_server}/picture.png"), picture)
    img_utils.allow_image_downloads(False)
    with pytest.raises(ImageDownloadNotAllowedError):
        get_pil_image(f"{image_server}/picture.png")
    img_utils.allow_image_downloads(None)  # back to the environment
    assert img_utils.image_downloads_allowed()


def test_a_refused_url_in_a_tag_stays_text_with_a_warning(image_server: str) -> None:
    text = f"what is <img {image_server}/picture.png>?"
    io_ = IOScripted()
    with IOStream.set_default(io_):
        parts = gpt4v_formatter(text, img_format="pil")
    assert parts == [{"type": "text", "text": text}]
    assert "Warning! Unable to load image from http://127.0.0.1:" in io_.text
    assert "allow_image_downloads()" in io_.text
    # The "url" format loads nothing: the URL goes to the model as written.
    assert gpt4v_formatter(text, img_format="url")[1] == {
        "type": "image_url",
        "image_url": {"url": f"{image_server}/picture.png"},
    }


# -- <img> tags ------------------------------------------------------------------------------------


def test_tags_become_image_parts_between_text_parts(picture_file: Path, picture: Any) -> None:
    parts = gpt4v_formatter(f"what is <img {picture_file}>?", img_format="pil")
    assert [p["type"] for p in parts] == ["text", "image_url", "text"]
    assert parts[0]["text"] == "what is "
    assert parts[2]["text"] == "?"
    assert same_pixels(parts[1]["image_url"]["url"], picture)

    uri_parts = gpt4v_formatter(f"what is <img {picture_file}>?")  # "uri" is the default
    assert uri_parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert same_pixels(get_pil_image(uri_parts[1]["image_url"]["url"]), picture)

    alone = gpt4v_formatter(f"<img {picture_file}>", img_format="pil")
    assert [p.get("text") for p in alone] == ["", None, ""]


def test_quoted_paths_and_data_uris_in_tags(tmp_path: Path, picture: Any) -> None:
    spaced = tmp_path / "my picture.png"
    picture.save(spaced)
    uri = pil_to_data_uri(picture)
    parts = gpt4v_formatter(f'a <img "{spaced}"> b <img {uri}> c', img_format="pil")
    assert [p.get("text") for p in parts] == ["a ", None, " b ", None, " c"]
    assert same_pixels(parts[1]["image_url"]["url"], picture)
    assert same_pixels(parts[3]["image_url"]["url"], picture)
    src_attr = gpt4v_formatter(f'<img src="{spaced}">', img_format="pil")
    assert same_pixels(src_attr[1]["image_url"]["url"], picture)


def test_an_unloadable_tag_stays_in_the_text(picture_file: Path) -> None:
    io_ = IOScripted()
    with IOStream.set_default(io_):
        parts = gpt4v_formatter(f"<img missing.png> and <img {picture_file}>!", img_format="pil")
    assert [p.get("text") for p in parts] == ["<img missing.png> and ", None, "!"]
    assert "Warning! Unable to load image from missing.png, because cannot load" in io_.text


def test_text_without_tags_and_bad_formats() -> None:
    assert gpt4v_formatter("no images", img_format="pil") == [{"type": "text", "text": "no images"}]
    assert gpt4v_formatter('<img alt="no source">') == [
        {"type": "text", "text": '<img alt="no source">'}
    ]
    with pytest.raises(AssertionError, match="img_format"):
        gpt4v_formatter("x", img_format="png")


def test_llava_formatter(picture_file: Path, picture: Any) -> None:
    with IOStream.set_default(IOScripted()):
        text, images = llava_formatter(
            f"a <img {picture_file}> b <img gone.png> c <img {picture_file}>"
        )
        ordered, _ = llava_formatter(f"<img {picture_file}><img {picture_file}>", True)
    assert text == "a <image> b  c <image>"
    assert len(images) == 2
    assert same_pixels(get_pil_image(images[0]), picture)
    assert ordered == "<image 0><image 1>"


def test_extract_img_paths() -> None:
    text = "See http://example.com/a/cat.JPG, the file ./shots/dog.png and notes.txt."
    assert extract_img_paths(text) == ["http://example.com/a/cat.JPG", "shots/dog.png"]


def test_message_formatter_pil_to_b64_copies(picture: Any) -> None:
    messages = [
        {"role": "system", "content": "plain"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": picture, "detail": "low"}},
                {"type": "image_url", "image_url": {"url": "https://example.com/x.png"}},
            ],
        },
    ]
    out = message_formatter_pil_to_b64(messages)
    assert out[0] is messages[0]
    image = out[1]["content"][1]["image_url"]
    assert image["detail"] == "low"
    assert same_pixels(get_pil_image(image["url"]), picture)
    assert out[1]["content"][2]["image_url"]["url"] == "https://example.com/x.png"
    assert messages[1]["content"][1]["image_url"]["url"] is picture  # the input is unchanged


# -- the module's loaders, as AutoGen's tests patch them ------------------------------------------


def test_formatters_load_through_the_modules_get_image_data(
    picture: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # AutoGen's formatters call img_utils.get_image_data when they run, so a stand-in patched
    # onto the module is what loads the image: nothing is read or downloaded.
    b64 = base64.b64encode(_png(picture)).decode()
    asked: list[str] = []

    def stand_in(src: str, use_b64: bool = True) -> str:
        asked.append(src)
        return b64

    monkeypatch.setattr(img_utils, "get_image_data", stand_in)
    text = "two <img http://example.com/a.png> and <img http://example.com/b.png>."
    assert gpt4v_formatter(text) == [
        {"type": "text", "text": "two "},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64}},
        {"type": "text", "text": " and "},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64}},
        {"type": "text", "text": "."},
    ]
    assert llava_formatter(text, order_image_tokens=True) == (
        "two <image 0> and <image 1>.",
        [b64, b64],
    )
    assert asked == ["http://example.com/a.png", "http://example.com/b.png"] * 2


def test_the_pil_format_loads_through_the_modules_get_pil_image(
    picture: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(img_utils, "get_pil_image", lambda src: picture)
    parts = gpt4v_formatter("a <img http://example.com/a.png>", img_format="pil")
    assert parts[1] == {"type": "image_url", "image_url": {"url": picture}}


def _png(image: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
