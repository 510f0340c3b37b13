"""Helpers for the tests that run code in the real Docker engine (``@pytest.mark.docker``).

The sandbox image is ``$PARLEY_SANDBOX_IMAGE`` (default ``parley-sandbox:latest``), the Jupyter
gateway image ``$PARLEY_JUPYTER_IMAGE`` (default ``parley-jupyter:latest``). scripts/test.sh builds
both before pytest starts; a missing one is built here with ``parley.coding.images.build_image``
(from Debian's packages when no registry is reachable). The fixtures themselves live in the test modules, built on
these functions, since only conftest files and test modules can hold fixtures.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from docker import DockerClient

    from parley.coding.docker_commandline_code_executor import DockerCommandLineCodeExecutor

SANDBOX_IMAGE = os.environ.get("PARLEY_SANDBOX_IMAGE") or "parley-sandbox:latest"
JUPYTER_IMAGE = os.environ.get("PARLEY_JUPYTER_IMAGE") or "parley-jupyter:latest"
REPO = Path(__file__).resolve().parents[2]

_built: list[str] = []  # images checked (or built) in this session


@contextmanager
def docker_client() -> Iterator[DockerClient]:
    """A client of the engine, closed afterwards; fails the test if there is no engine."""
    import docker

    try:
        client = docker.from_env(timeout=60)
    except docker.errors.DockerException as error:
        pytest.fail(f"the Docker engine is not reachable: {error}", pytrace=False)
    try:
        yield client
    finally:
        client.close()


def ensure_sandbox_image() -> str:
    """The sandbox image's name, built first (``parley sandbox build``) if it is missing."""
    return ensure_image("sandbox", SANDBOX_IMAGE)


def ensure_jupyter_image() -> str:
    """The Jupyter gateway image's name, built first (``parley sandbox build --jupyter``) if it
    is missing."""
    return ensure_image("jupyter", JUPYTER_IMAGE)


def ensure_image(kind: str, tag: str) -> str:
    """The image ``tag`` of ``kind``, built first if it is missing."""
    from parley.coding.images import build_image

    if tag not in _built:
        try:
            build_image(kind, tag=tag)
        except Exception as error:  # ImageBuildError, no engine: a failure, not an error
            pytest.fail(f"building {tag} failed: {error}", pytrace=False)
        _built.append(tag)
    return tag


def container_exists(name: str) -> bool:
    """Whether a container called ``name`` exists, running or not (asked of the engine)."""
    import docker

    with docker_client() as client:
        try:
            client.containers.get(name)
        except docker.errors.NotFound:
            return False
        return True


@contextmanager
def executor(work_dir: Path, **options: Any) -> Iterator[DockerCommandLineCodeExecutor]:
    """A DockerCommandLineCodeExecutor on the sandbox image, stopped afterwards."""
    from parley.coding.docker_commandline_code_executor import DockerCommandLineCodeExecutor

    options.setdefault("image", ensure_sandbox_image())
    options.setdefault("timeout", 20)
    with DockerCommandLineCodeExecutor(work_dir=work_dir, **options) as ex:
        yield ex


def processes(ex: DockerCommandLineCodeExecutor) -> list[str]:
    """The command lines of the processes in the executor's container, from ``ps`` run there,
    leaving out the keeper (PID 1), ``ps`` itself and the commands that run it."""
    from parley.coding import CodeBlock

    result = ex.execute_code_blocks(
        [CodeBlock(language="sh", code="# filename: ps-probe.sh\nps -e -o pid=,args=")]
    )
    assert result.exit_code == 0, result.output
    # PID 1 is the container's keeper (parley.coding.docker._keeper), not the code's.
    pids_and_lines = [line.split(None, 1) for line in result.output.splitlines() if line.strip()]
    lines = [line for pid, line in pids_and_lines if pid != "1"]
    # The probe's own chain: sh -c <wrapper>, timeout ..., sh ps-probe.sh, ps.
    return [
        line
        for line in lines
        if not line.startswith(("ps ", "timeout ", "/bin/sh -c timeout"))
        and "ps-probe.sh" not in line
    ]


def wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    """Whether ``condition()`` became true within ``seconds`` (checked every 50 ms)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True
