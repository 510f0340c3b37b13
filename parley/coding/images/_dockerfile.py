"""Building an image from the Dockerfile shipped in this package, over ``python:3-slim``.

This route needs the base image: present in the engine, or pulled from a registry. The build
context holds only the Dockerfile; the engine's classic builder runs it, so no BuildKit is needed.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...exceptions import ImageBuildError
from ..docker._engine import find_image, first_line
from ._recipes import PACKAGES_LABEL, Recipe, packages_label

if TYPE_CHECKING:
    from docker import DockerClient

__all__ = ["BASE_IMAGE", "base_available", "build_from_dockerfile", "dockerfile_text"]

BASE_IMAGE = "python:3-slim"


def dockerfile_text(recipe: Recipe) -> str:
    """The recipe's Dockerfile, as shipped in ``parley/coding/images/dockerfiles``."""
    return (
        resources.files(__package__).joinpath("dockerfiles").joinpath(recipe.dockerfile).read_text()
    )


def base_available(client: DockerClient, base: str, log: Callable[[str], None]) -> bool:
    """Whether the base image is in the engine, pulling it if a registry answers."""
    import docker

    if find_image(client, base) is not None:
        return True
    try:
        client.images.pull(base)
    except docker.errors.DockerException as error:
        log(f"{base} is not here and cannot be pulled ({first_line(error)})")
        return False
    return True


def build_from_dockerfile(
    client: DockerClient,
    recipe: Recipe,
    tag: str,
    *,
    base: str,
    packages: Sequence[str],
    log: Callable[[str], None],
) -> str:
    """Build and tag the image over ``base``; its id. Raises :class:`ImageBuildError` with the
    build's log."""
    log(f"building {tag} from {recipe.dockerfile} over {base}")
    with tempfile.TemporaryDirectory(prefix="parley-image-") as context:
        Path(context, "Dockerfile").write_text(dockerfile_text(recipe))
        stream = client.api.build(
            path=context,
            tag=tag,
            rm=True,
            forcerm=True,
            decode=True,
            buildargs={"BASE": base, "PACKAGES": " ".join(packages)},
            labels={PACKAGES_LABEL: packages_label(packages)},
        )
        return _follow(stream, log)


def _follow(stream: Iterable[dict[str, Any]], log: Callable[[str], None]) -> str:
    """Read the build's progress to its end; the image id, or the error with the last lines."""
    lines: list[str] = []
    image_id: str | None = None
    for chunk in stream:
        if "error" in chunk:
            tail = "\n".join(lines[-15:])
            raise ImageBuildError(f"docker build failed: {chunk['error'].strip()}\n{tail}")
        text = chunk.get("stream")
        if isinstance(text, str) and text.strip():
            lines.append(text.rstrip())
            if text.startswith("Step "):
                log(text.strip())
        aux = chunk.get("aux")
        if isinstance(aux, dict) and isinstance(aux.get("ID"), str):
            image_id = aux["ID"].removeprefix("sha256:")
    if image_id is None:
        raise ImageBuildError(f"docker build gave no image: {json.dumps(lines[-5:])}")
    return image_id
