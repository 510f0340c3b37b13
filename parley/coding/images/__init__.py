"""parley's Docker images, built from the installed package: ``parley sandbox build`` / ``status``.

Two images (recipes in ``_recipes``): ``sandbox``, the one the Docker executors run code in
(``parley-sandbox:latest``), and ``jupyter``, the Jupyter Kernel Gateway that
:class:`~parley.coding.jupyter.DockerJupyterServer` runs (``parley-jupyter:latest``). Each is
built one of two ways, with the same result:

* ``"dockerfile"``: the Dockerfile shipped in ``dockerfiles/``, over ``python:3-slim``, when that
  image is in the engine or a registry answers a pull;
* ``"debian"``: a root file system made from Debian's packages by mmdebstrap and imported into
  the engine, when no registry can be reached. Needs mmdebstrap, a Debian mirror (``mirror``,
  e.g. an apt-cacher-ng or a ``file://`` copy) and root or unprivileged user namespaces.

``method="auto"`` takes the first that can work. A built image is smoke-tested (Python as the
``sandbox`` user, without network) and removed again if that fails. An image that already
exists is reused unless ``rebuild`` is set. Air-gapped machines can also carry an image over:
``docker save parley-sandbox:latest | gzip > x.tar.gz`` there, ``docker load`` here.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ...exceptions import ImageBuildError
from ..docker._engine import connect, default_image_candidates, find_image
from ._recipes import JUPYTER, PACKAGES_LABEL, RECIPES, SANDBOX, Recipe, packages_label

if TYPE_CHECKING:
    from docker import DockerClient

__all__ = [
    "JUPYTER",
    "SANDBOX",
    "BuiltImage",
    "ImageState",
    "ImageStatus",
    "Method",
    "Recipe",
    "build_image",
    "image_candidates",
    "image_status",
]

Method = Literal["auto", "dockerfile", "debian"]


@dataclass(frozen=True)
class BuiltImage:
    """What :func:`build_image` did."""

    tag: str
    image_id: str
    method: Literal["dockerfile", "debian", "existing"]
    seconds: float


@dataclass(frozen=True)
class ImageState:
    """One candidate image and whether the engine has it."""

    name: str
    present: bool
    size_mb: int | None = None
    created: str | None = None


@dataclass(frozen=True)
class ImageStatus:
    """The images parley would use for one recipe, in the order it tries them."""

    kind: str
    candidates: tuple[ImageState, ...]

    @property
    def chosen(self) -> str | None:
        """The image parley uses: the first candidate present (none is ever pulled for this)."""
        return next((state.name for state in self.candidates if state.present), None)


def image_candidates(kind: str = "sandbox") -> list[str]:
    """The images parley looks for, in order: ``$PARLEY_SANDBOX_IMAGE`` (or
    ``$PARLEY_JUPYTER_IMAGE``) first if set, then parley's own, then (sandbox) AutoGen's."""
    recipe = _recipe(kind)
    if recipe is SANDBOX:
        return default_image_candidates()
    chosen = os.environ.get(recipe.tag_env)
    return [chosen] if chosen else [recipe.default_tag]


def image_status(kind: str = "sandbox", client: DockerClient | None = None) -> ImageStatus:
    """Which of :func:`image_candidates` the engine has. Raises RuntimeError without an engine."""
    own = client is None
    client = client or connect(timeout=30)
    try:
        states = []
        for name in image_candidates(kind):
            image = find_image(client, name)
            if image is None:
                states.append(ImageState(name, present=False))
                continue
            attrs = image.attrs
            states.append(
                ImageState(
                    name,
                    present=True,
                    size_mb=int(attrs.get("Size", 0)) // (1024 * 1024),
                    created=str(attrs.get("Created", ""))[:19].replace("T", " ") or None,
                )
            )
        return ImageStatus(kind, tuple(states))
    finally:
        if own:
            client.close()


def build_image(
    kind: str = "sandbox",
    *,
    tag: str | None = None,
    packages: Sequence[str] = (),
    method: Method = "auto",
    base: str | None = None,
    rebuild: bool = False,
    suite: str | None = None,
    mirror: str | None = None,
    log: Callable[[str], None] | None = None,
) -> BuiltImage:
    """Build one of parley's images and tag it ``tag`` (default: the recipe's, e.g.
    ``parley-sandbox:latest``). ``packages`` are extra Debian packages (both methods install
    Debian packages: ``python:3-slim`` is Debian too). ``base`` is the Dockerfile method's base
    image (default ``python:3-slim``; any Debian-based image with Python 3). ``suite`` and
    ``mirror`` steer the Debian method. ``log`` gets progress lines (default: standard error).

    Raises :class:`~parley.exceptions.ImageBuildError` saying what is missing, and
    RuntimeError when no Docker engine is reachable.
    """
    from ._debian import build_from_debian
    from ._dockerfile import BASE_IMAGE, base_available, build_from_dockerfile

    recipe = _recipe(kind)
    tag = tag or recipe.default_tag
    base = base or BASE_IMAGE
    say = log or _to_stderr
    started = time.monotonic()
    client = connect()
    try:
        existing = None if rebuild else find_image(client, tag)
        if existing is not None:
            _check_reusable(existing, tag, packages)
            say(f"{tag} already exists; reusing it (rebuild=True / --rebuild builds it again)")
            return BuiltImage(tag, str(existing.id).removeprefix("sha256:"), "existing", 0.0)
        if method == "auto":
            method = "dockerfile" if base_available(client, base, say) else "debian"
        if method == "dockerfile":
            image_id = build_from_dockerfile(
                client, recipe, tag, base=base, packages=packages, log=say
            )
        elif method == "debian":
            image_id = build_from_debian(
                client, recipe, tag, packages=packages, suite=suite, mirror=mirror, log=say
            )
        else:
            raise ValueError(f"method must be 'auto', 'dockerfile' or 'debian', not {method!r}")
        _smoke_test(client, recipe, tag, image_id)
        seconds = time.monotonic() - started
        size = int(client.images.get(image_id).attrs.get("Size", 0)) // (1024 * 1024)
        say(f"built {tag} ({size} MiB) from {method} in {seconds:.0f} s")
        return BuiltImage(tag, image_id, method, seconds)
    finally:
        client.close()


def _recipe(kind: str) -> Recipe:
    try:
        return RECIPES[kind]
    except KeyError:
        raise ValueError(f"unknown image kind {kind!r}: use one of {', '.join(RECIPES)}") from None


def _check_reusable(image: Any, tag: str, packages: Sequence[str]) -> None:
    """Refuse to reuse ``image`` for a build that asks for packages it was not built with."""
    if not packages:
        return
    recorded = (image.labels or {}).get(PACKAGES_LABEL)
    if recorded is None or not set(packages) <= set(recorded.split()):
        raise ImageBuildError(
            f"{tag} already exists, built without {packages_label(packages)} (its extra packages: "
            f"{recorded or 'none recorded'}): build it again with rebuild=True (--rebuild), or "
            "give the new image another tag"
        )


def _smoke_test(client: DockerClient, recipe: Recipe, tag: str, image_id: str) -> None:
    """Run Python in the image the way code runs there; remove the image if it does not work."""
    import docker

    try:
        out = client.containers.run(
            image_id,
            ["python", "-c", recipe.smoke_test],
            user="1000:1000",
            network_mode="none",
            remove=True,
            stdout=True,
            stderr=True,
        )
        got = out.decode("utf-8", "replace").strip()
    except docker.errors.DockerException as error:
        got = str(error)
    if got != "1000 3":
        try:
            client.images.remove(image_id, force=True)
        except docker.errors.DockerException:
            pass
        raise ImageBuildError(
            f"the new image {tag} failed its smoke test: expected '1000 3', got {got!r}"
        )


def _to_stderr(line: str) -> None:
    print(f"parley sandbox: {line}", file=sys.stderr, flush=True)
