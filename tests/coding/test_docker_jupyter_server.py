"""DockerJupyterServer: the kernel gateway in a locked-down container, on the real engine.

One server for the module (the container starts in a few seconds); the tests that end a server
make their own. The image is parley's (``parley sandbox build --jupyter``, built by
scripts/test.sh or by the fixture).
"""

from __future__ import annotations

import base64
import concurrent.futures
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parley.coding import CodeBlock, CodeExecutorFactory
from parley.coding.jupyter import DockerJupyterServer, JupyterCodeExecutor
from parley.exceptions import JupyterGatewayError

from ._docker_support import REPO, container_exists, docker_client, ensure_jupyter_image
from ._jupyter_support import PNG_MAGIC, saved_png

pytestmark = [pytest.mark.docker, pytest.mark.jupyter]

# A 1x1 PNG, shown through IPython's display: no matplotlib is needed in the image.
PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


def gateway_containers() -> set[str]:
    with docker_client() as client:
        return {
            c.name for c in client.containers.list(all=True, filters={"name": "parley-jupyter-"})
        }


def py(code: str) -> list[CodeBlock]:
    return [CodeBlock(language="python", code=code)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DockerJupyterServer]:
    ensure_jupyter_image()
    with DockerJupyterServer(work_dir=tmp_path_factory.mktemp("gateway-work")) as started:
        yield started


@pytest.fixture
def executor(server: DockerJupyterServer, tmp_path: Path) -> Iterator[JupyterCodeExecutor]:
    with JupyterCodeExecutor(server, output_dir=tmp_path, timeout=20) as ex:
        yield ex


def test_state_survives_between_blocks_and_code_runs_as_the_sandbox_user(
    executor: JupyterCodeExecutor, server: DockerJupyterServer
) -> None:
    first = executor.execute_code_blocks(py("x = 21\nimport os\nprint(os.getuid(), os.getcwd())"))
    assert first.exit_code == 0, first.output
    assert first.output.split() == ["1000", "/workspace"]
    second = executor.execute_code_blocks(py("open('made.txt', 'w').write('hi')\nprint(x * 2)"))
    assert second.output.strip() == "42"
    assert (server.work_dir / "made.txt").read_text() == "hi"


def test_an_image_is_saved_on_the_host(executor: JupyterCodeExecutor, tmp_path: Path) -> None:
    code = f"from IPython.display import Image, display\nimport base64\ndisplay(Image(data=base64.b64decode({PIXEL!r})))"
    result = executor.execute_code_blocks(py(code))
    assert result.exit_code == 0, result.output
    match = re.search(r"Image data saved to (\S+\.png)", result.output)
    assert match is not None, result.output
    assert saved_png(match.group(1), tmp_path).startswith(PNG_MAGIC)


def test_the_code_has_no_network(executor: JupyterCodeExecutor) -> None:
    code = textwrap.dedent(
        """\
        import socket
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect(("1.1.1.1", 80))
            print("connected")
        except OSError as error:
            print("refused:", type(error).__name__)
        """
    )
    result = executor.execute_code_blocks(py(code))
    assert "refused:" in result.output, result.output


def test_the_gateway_wants_its_token(server: DockerJupyterServer) -> None:
    from parley.coding.jupyter import JupyterClient, JupyterConnectionInfo

    info = server.connection_info
    assert info.token
    assert "python3" in server.get_client().list_kernel_specs()["kernelspecs"]
    anonymous = JupyterClient(
        JupyterConnectionInfo(host=info.host, use_https=False, port=info.port)
    )
    with pytest.raises(JupyterGatewayError) as error:
        anonymous.list_kernel_specs()
    assert error.value.status in (401, 403)


def test_a_timeout_interrupts_and_the_kernel_survives(
    server: DockerJupyterServer, tmp_path: Path
) -> None:
    with JupyterCodeExecutor(server, output_dir=tmp_path, timeout=2) as ex:
        ex.execute_code_blocks(py("kept = 7"))
        started = time.monotonic()
        slow = ex.execute_code_blocks(py("import time\ntime.sleep(60)"))
        assert slow.exit_code == 1
        assert "Timeout" in slow.output or "timeout" in slow.output
        assert time.monotonic() - started < 40  # interrupted at 2 s, not after its 60 s
        assert ex.execute_code_blocks(py("print(kept)")).output.strip() == "7"


@pytest.fixture
def network_name(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A name of its own for the internal network (the shared one is left alone); every network
    of that name is removed afterwards."""
    name = f"parley-jupyter-test-{uuid.uuid4().hex[:12]}"
    monkeypatch.setattr(sys.modules[DockerJupyterServer.__module__], "INTERNAL_NETWORK", name)
    yield name
    with docker_client() as client:
        for network in networks_named(client, name):
            network.remove()


def networks_named(client: Any, name: str) -> list[Any]:
    return [n for n in client.networks.list(names=[name]) if n.name == name]


def test_servers_started_at_once_share_one_internal_network(
    network_name: str, tmp_path: Path
) -> None:
    """Two processes making the internal network at once (test workers, a user's batch) made two
    networks of its name on Docker before 25, whose name could then not be used at all."""
    ensure_jupyter_image()
    start = threading.Barrier(3)

    def run(n: int) -> str:
        (tmp_path / f"out{n}").mkdir()
        start.wait(timeout=60)
        with (
            DockerJupyterServer(work_dir=tmp_path / f"work{n}") as server,
            JupyterCodeExecutor(server, output_dir=tmp_path / f"out{n}") as ex,
        ):
            return ex.execute_code_blocks(py(f"print({n} * 7)")).output.strip()

    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        outputs = list(pool.map(run, range(3), timeout=240))
    assert outputs == ["0", "7", "14"]
    with docker_client() as client:
        assert len(networks_named(client, network_name)) == 1


def test_a_network_name_two_networks_share_is_repaired(network_name: str, tmp_path: Path) -> None:
    """Such twins, left by an older parley: the unused one is removed, and a server starts."""
    import docker

    ensure_jupyter_image()
    with docker_client() as client:
        try:
            for _ in range(2):
                client.networks.create(network_name, driver="bridge", internal=True)
        except docker.errors.APIError as error:
            if error.status_code != 409:
                raise
            pytest.skip("this engine refuses a second network of the same name")
        with (
            DockerJupyterServer(work_dir=tmp_path / "work") as server,
            JupyterCodeExecutor(server, output_dir=tmp_path) as ex,
        ):
            assert ex.execute_code_blocks(py("print(6 * 7)")).output.strip() == "42"
        assert len(networks_named(client, network_name)) == 1


def test_stop_removes_the_container_and_the_factory_owns_its_server(tmp_path: Path) -> None:
    ensure_jupyter_image()
    before = gateway_containers()
    executor = CodeExecutorFactory.create(
        {"executor": "jupyter-docker", "jupyter-docker": {"output_dir": str(tmp_path)}}
    )
    assert isinstance(executor, JupyterCodeExecutor)
    assert executor.execute_code_blocks(py("print(6 * 7)")).output.strip() == "42"
    # The kernel's container, by the host name Docker gives it (the start of its ID): other
    # servers (parallel test workers) may start and stop containers meanwhile.
    hostname = executor.execute_code_blocks(py("import socket\nprint(socket.gethostname())"))
    with docker_client() as client:
        name = client.containers.get(hostname.output.strip()).name
    assert name in gateway_containers() - before
    executor.stop()
    assert not container_exists(name)


def test_bad_input_is_refused_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="Custom image parley-test-image:absent does not exist"):
        DockerJupyterServer(custom_image_name="parley-test-image:absent")
    with pytest.raises(ValueError, match="does not take docker_kwargs"):
        DockerJupyterServer(privileged=True)
    monkeypatch.setenv("PARLEY_JUPYTER_IMAGE", "parley-test-image:absent")
    with pytest.raises(RuntimeError, match="parley sandbox build --jupyter"):
        DockerJupyterServer()


def test_a_killed_owner_takes_its_gateway_container_with_it(tmp_path: Path) -> None:
    ensure_jupyter_image()
    script = textwrap.dedent(
        f"""\
        import sys, time
        sys.path.insert(0, {str(REPO)!r})
        from parley.coding.jupyter import DockerJupyterServer
        server = DockerJupyterServer(work_dir={str(tmp_path)!r})
        print(server.container_name, flush=True)
        time.sleep(120)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env={**os.environ}
    )
    try:
        assert child.stdout is not None
        name = child.stdout.readline().strip()
        assert name.startswith("parley-jupyter-")
        assert container_exists(name)
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        deadline = time.monotonic() + 20
        while container_exists(name) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not container_exists(name)
    finally:
        child.kill()
        child.wait(10)
        if child.stdout is not None:
            child.stdout.close()
