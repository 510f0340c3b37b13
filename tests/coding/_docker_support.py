"""Helpers for the tests that run code in the real Docker engine (``@pytest.mark.docker``).

The sandbox image is ``$PARLEY_SANDBOX_IMAGE`` (default ``parley-sandbox:latest``). If it is
missing it is built once per session with ``scripts/build-sandbox-image.sh`` (Debian packages
only; no image registry is needed). The fixtures themselves live in the test modules, built on
these functions, since only conftest files and test modules can hold fixtures.
"""

from __future__ import annotations

import os
import subprocess
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
REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "scripts" / "build-sandbox-image.sh"
BUILD_TIMEOUT = 600  # seconds; a build takes well under a minute with a nearby mirror

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
    """The sandbox image's name, built first with the project's script if it is missing."""
    import docker

    if SANDBOX_IMAGE in _built:
        return SANDBOX_IMAGE
    with docker_client() as client:
        try:
            client.images.get(SANDBOX_IMAGE)
            present = True
        except docker.errors.ImageNotFound:
            present = False
    if not present:
        try:
            done = subprocess.run(
                ["bash", str(BUILD_SCRIPT), SANDBOX_IMAGE],
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"building {SANDBOX_IMAGE} took more than {BUILD_TIMEOUT} s", pytrace=False)
        if done.returncode != 0:
            pytest.fail(
                f"{BUILD_SCRIPT.name} failed ({done.returncode}):\n{done.stderr[-3000:]}",
                pytrace=False,
            )
    _built.append(SANDBOX_IMAGE)
    return SANDBOX_IMAGE


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
    # PID 1 is the container's keeper (parley.coding._docker_keeper), not the code's.
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
