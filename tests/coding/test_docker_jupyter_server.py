"""DockerJupyterServer: the kernel gateway in a locked-down container, on the real engine.

One server for the module (the container starts in a few seconds); the tests that end a server
make their own. The image is parley's (``parley sandbox build --jupyter``, built by
scripts/test.sh or by the fixture).
"""

from __future__ import annotations

import base64
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

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
        assert time.monotonic() - started < 15
        assert ex.execute_code_blocks(py("print(kept)")).output.strip() == "7"


def test_stop_removes_the_container_and_the_factory_owns_its_server(tmp_path: Path) -> None:
    ensure_jupyter_image()
    before = gateway_containers()
    executor = CodeExecutorFactory.create(
        {"executor": "jupyter-docker", "jupyter-docker": {"output_dir": str(tmp_path)}}
    )
    assert isinstance(executor, JupyterCodeExecutor)
    assert executor.execute_code_blocks(py("print(6 * 7)")).output.strip() == "42"
    (name,) = gateway_containers() - before
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
