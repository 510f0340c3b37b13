"""Images drawn with Pillow for the multimodal tests, and the download switch put back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parley.agentchat.contrib import img_utils


def draw_picture(size: tuple[int, int] = (48, 32)) -> Any:
    """A small RGB picture with distinct regions, so that a mix-up of pixels shows."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.rectangle((2, 2, size[0] // 2, size[1] - 3), fill=(200, 30, 30))
    draw.ellipse((size[0] // 2, 4, size[0] - 3, size[1] - 5), fill=(30, 60, 220))
    draw.line((0, size[1] - 1, size[0] - 1, 0), fill=(10, 160, 40), width=2)
    return image


def same_pixels(a: Any, b: Any) -> bool:
    return bool(a.size == b.size and a.convert("RGB").tobytes() == b.convert("RGB").tobytes())


@pytest.fixture
def picture() -> Any:
    return draw_picture()


@pytest.fixture
def picture_file(tmp_path: Path, picture: Any) -> Path:
    path = tmp_path / "picture.png"
    picture.save(path)
    return path


@pytest.fixture(autouse=True)
def downloads_decided_by_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with downloads off (no env var, no call) and leaves them so."""
    monkeypatch.delenv(img_utils.DOWNLOAD_ENV, raising=False)
    img_utils.allow_image_downloads(None)
    yield
    img_utils.allow_image_downloads(None)
