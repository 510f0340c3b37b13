"""Reaching the Docker engine and choosing the sandbox image, with errors that say what to do.

The ``docker`` package is imported inside the functions: building an agent or an executor never
imports it, only running code in Docker does.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.images import Image

__all__ = [
    "AUTOGEN_IMAGES",
    "DEFAULT_IMAGE",
    "IMAGE_ENV",
    "OWN_IMAGES",
    "PARLEY_IMAGE",
    "PARLEY_JUPYTER_IMAGE",
    "connect",
    "default_image_candidates",
    "default_images",
    "engine_answers",
    "ensure_image",
    "find_image",
    "first_line",
]

IMAGE_ENV = "PARLEY_SANDBOX_IMAGE"
"""Environment variable naming the default sandbox image (e.g. ``parley-sandbox:latest``)."""

DEFAULT_IMAGE = "python:3-slim"
"""AutoGen's default image, used when ``PARLEY_SANDBOX_IMAGE`` is not set."""

AUTOGEN_IMAGES = ("python:3-slim", "python:3", "python:3-windowsservercore")
"""What ``use_docker=True`` meant in AutoGen: the first of these that exists or can be pulled."""

PARLEY_IMAGE = "parley-sandbox:latest"
"""The sandbox image ``parley sandbox build`` makes."""

PARLEY_JUPYTER_IMAGE = "parley-jupyter:latest"
"""The Jupyter gateway image ``parley sandbox build --jupyter`` makes."""

OWN_IMAGES = frozenset({PARLEY_IMAGE, PARLEY_JUPYTER_IMAGE})
"""parley's own images: used when present, never pulled (a registry's image of such a name
would be someone else's)."""

# Seconds an API call may wait for the engine. Generous, since a pull streams for minutes, but
# bounded: an unreachable TCP DOCKER_HOST must not hang an agent forever.
_API_TIMEOUT = 120

_BUILD_HINT = (
    f"Build parley's sandbox image with `parley sandbox build` (it uses python:3-slim where a "
    f"registry is reachable and Debian's packages, through mmdebstrap, where none is); "
    f"`parley sandbox status` shows which images exist and which one parley uses. parley uses "
    f"{PARLEY_IMAGE} whenever it is present, or the image named by {IMAGE_ENV}."
)


def default_images() -> tuple[str, ...]:
    """The images an executor made without ``image`` tries: ``$PARLEY_SANDBOX_IMAGE`` if set,
    else parley's own image if present, else AutoGen's ``python:3-slim``."""
    chosen = os.environ.get(IMAGE_ENV)
    return (chosen,) if chosen else (PARLEY_IMAGE, DEFAULT_IMAGE)


def default_image_candidates() -> list[str]:
    """The images ``use_docker=True`` tries in order: ``$PARLEY_SANDBOX_IMAGE`` first if set,
    then parley's own image, then AutoGen's list."""
    chosen = os.environ.get(IMAGE_ENV)
    names = [chosen] if chosen else []
    return names + [i for i in (PARLEY_IMAGE, *AUTOGEN_IMAGES) if i not in names]


def connect(timeout: float = _API_TIMEOUT) -> DockerClient:
    """A client of the engine from the environment (``DOCKER_HOST``...), connected; its calls
    wait ``timeout`` seconds at most.

    Raises RuntimeError saying how to fix it when the engine is missing or stopped.
    """
    try:
        import docker
    except ImportError as error:  # a dependency of parley, but may be removed by hand
        raise RuntimeError(
            "Running code in Docker needs the `docker` Python package: pip install docker"
        ) from error
    _probe_unix_socket(timeout)
    try:
        return docker.from_env(timeout=timeout)
    except docker.errors.DockerException as error:
        raise RuntimeError(_engine_missing(error)) from error


def engine_answers(timeout: float) -> bool:
    """Whether the engine named by the environment answers a ping within ``timeout`` seconds."""
    try:
        client = connect(timeout)
    except RuntimeError:
        return False
    try:
        return bool(client.ping())
    except Exception:  # DockerException, requests' ConnectionError, a socket timeout...
        return False
    finally:
        client.close()


def _probe_unix_socket(timeout: float) -> None:
    """Connect to the engine's Unix socket, if that is where it is, and hang up.

    docker-py leaks the socket of a failed connection to a Unix socket (a ResourceWarning at
    garbage collection), so a missing engine is detected here first, with a socket that is
    always closed.
    """
    host = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    if sys.platform == "win32" or not host.startswith("unix://"):
        return  # Windows engines listen on a named pipe by default
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(timeout)
        try:
            probe.connect(host.removeprefix("unix://"))
        except OSError as error:
            raise RuntimeError(_engine_missing(error)) from error


def _engine_missing(error: Exception) -> str:
    return (
        f"Code is set to run in a Docker container, but the Docker engine is not reachable "
        f"({error}). Start Docker (e.g. `sudo systemctl start docker`) and make sure this user "
        'may use it; or run code without a container: pass "use_docker": False in '
        "code_execution_config, set the environment variable AUTOGEN_USE_DOCKER=False, or use "
        "LocalCommandLineCodeExecutor instead of DockerCommandLineCodeExecutor."
    )


def ensure_image(client: DockerClient, candidates: Sequence[str]) -> str:
    """The first of ``candidates`` present locally, else the first that can be pulled.

    Never falls back to running on the host: if none is available, RuntimeError explains how to
    build an image offline.
    """
    import docker

    if not candidates:
        raise ValueError("no Docker image given")
    for image in candidates:
        if find_image(client, image) is not None:
            return image
    failures = []
    for image in candidates:
        if image in OWN_IMAGES:
            failures.append(f"{image}: not built yet")
            continue
        try:
            client.images.pull(image)  # docker-py splits off the tag; none means "latest"
            return image
        except docker.errors.DockerException as error:
            failures.append(f"{image}: {first_line(error)}")
    tried = "; ".join(failures)
    raise RuntimeError(
        f"No Docker image to run code in: {', '.join(candidates)} "
        f"{'is' if len(candidates) == 1 else 'are'} not present locally and could not be pulled "
        f"({tried}). {_BUILD_HINT}"
    )


def find_image(client: DockerClient, name: str) -> Image | None:
    """The engine's image called ``name``, or None if it has none."""
    import docker

    try:
        return client.images.get(name)
    except docker.errors.ImageNotFound:
        return None


def first_line(error: Exception) -> str:
    """The first line of an engine error (their texts run on with the server's details)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
