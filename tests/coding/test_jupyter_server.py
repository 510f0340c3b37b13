"""``LocalJupyterServer`` and ``JupyterClient`` against a real Jupyter Kernel Gateway."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from parley.coding.jupyter import (
    JupyterClient,
    JupyterConnectable,
    JupyterConnectionInfo,
    LocalJupyterServer,
)
from parley.coding.jupyter.jupyter_client import JupyterKernelClient
from parley.exceptions import JupyterGatewayError
from tests.coding._jupyter_support import PIDS, alive, processes_mentioning, wait_until_gone

pytestmark = [pytest.mark.jupyter, pytest.mark.timeout(120)]

SECRET = "sk-parley-test-secret-0123456789"


@pytest.fixture(scope="module")
def log_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gateway") / "gateway.log"


@pytest.fixture(scope="module")
def server(log_file: Path) -> Iterator[LocalJupyterServer]:
    with LocalJupyterServer(log_file=str(log_file)) as server:
        yield server


@pytest.fixture
def client(server: LocalJupyterServer) -> JupyterClient:
    return server.get_client()


@pytest.fixture
def kernel_id(client: JupyterClient) -> Iterator[str]:
    kernel_id = client.start_kernel("python3")
    yield kernel_id
    client.delete_kernel(kernel_id)


def test_connection_info(server: LocalJupyterServer) -> None:
    assert isinstance(server, JupyterConnectable)
    info = server.connection_info
    assert (info.host, info.use_https, info.port) == ("127.0.0.1", False, server.port)
    assert info.token is not None
    assert len(info.token) == 64
    assert server.get_client().connection_info == info


def test_requests_without_the_token_are_refused(server: LocalJupyterServer, kernel_id: str) -> None:
    info = server.connection_info
    for token in (None, "wrong"):
        stranger = JupyterClient(JupyterConnectionInfo(info.host, False, info.port, token))
        with pytest.raises(JupyterGatewayError, match="401") as caught:
            stranger.list_kernel_specs()
        assert caught.value.status == 401
        with pytest.raises(JupyterGatewayError, match="401"):
            stranger.start_kernel("python3")
        with pytest.raises(JupyterGatewayError, match="refused the websocket"):
            stranger.get_kernel_client(kernel_id)


def test_kernel_specs(client: JupyterClient) -> None:
    specs = client.list_kernel_specs()
    assert specs["default"] == "python3"
    assert specs["kernelspecs"]["python3"]["spec"]["language"] == "python"


def test_start_list_and_delete_kernels(client: JupyterClient, log_file: Path) -> None:
    first = client.start_kernel("python3")
    second = client.start_kernel("python3")
    ids = [kernel["id"] for kernel in client.list_kernels()]
    assert {first, second} <= set(ids)
    client.delete_kernel(first)
    client.delete_kernel(second)
    assert not {first, second} & {kernel["id"] for kernel in client.list_kernels()}
    with pytest.raises(JupyterGatewayError, match="404") as caught:
        client.delete_kernel(first)
    assert caught.value.status == 404
    with pytest.raises(JupyterGatewayError, match=r"No such kernel named no-such-kernel$"):
        client.start_kernel("no-such-kernel")
    assert f"Kernel started: {first}" in log_file.read_text()


def test_kernel_client_runs_code_in_the_given_folder(client: JupyterClient, tmp_path: Path) -> None:
    kernel_id = client.start_kernel("python3", path=str(tmp_path.relative_to("/")))
    try:
        with client.get_kernel_client(kernel_id) as kernel:
            assert kernel.wait_for_ready(timeout_seconds=30)
            result = kernel.execute("import os\nprint(os.getcwd())\n21 * 2", timeout_seconds=30)
            assert result == JupyterKernelClient.ExecutionResult(
                is_ok=True, output=f"{tmp_path}\n42\n", data_items=[]
            )
            error = kernel.execute("print('before')\nraise KeyError('k')", timeout_seconds=30)
            assert not error.is_ok
            assert error.output.startswith("before\nERROR: KeyError: 'k'\n")
            assert "Traceback" in error.output
            assert "\x1b[" not in error.output
    finally:
        client.delete_kernel(kernel_id)


def test_a_timeout_interrupts_the_kernel_which_keeps_its_variables(
    client: JupyterClient, kernel_id: str
) -> None:
    with client.get_kernel_client(kernel_id) as kernel:
        assert kernel.wait_for_ready(30)
        assert kernel.execute("x = 7", timeout_seconds=30).is_ok
        start = time.monotonic()
        late = kernel.execute("print('start', flush=True)\nimport time\ntime.sleep(100)", 1)
        assert time.monotonic() - start < 50  # interrupted at 1 s, not after its 100 s
        assert not late.is_ok
        assert late.output == (
            "start\nERROR: Timeout: the code block ran longer than 1 s; it was interrupted; the "
            "kernel keeps its variables.\n"
        )
        assert kernel.execute("print(x)", timeout_seconds=30).output == "7\n"


def test_restart_kernel_loses_the_variables(client: JupyterClient, kernel_id: str) -> None:
    with client.get_kernel_client(kernel_id) as kernel:
        assert kernel.wait_for_ready(30)
        assert kernel.execute("y = 1", timeout_seconds=30).is_ok
    client.restart_kernel(kernel_id)
    with client.get_kernel_client(kernel_id) as kernel:
        assert kernel.wait_for_ready(30)
        result = kernel.execute("y", timeout_seconds=30)
    assert not result.is_ok
    assert result.output.startswith("ERROR: NameError: name 'y' is not defined")


def test_stop_ends_the_gateway_its_kernels_and_what_they_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    server = LocalJupyterServer(log_file=None)
    client = server.get_client()
    kernel_id = client.start_kernel("python3")
    with client.get_kernel_client(kernel_id) as kernel:
        assert kernel.wait_for_ready(30)
        # The code cannot see parley's API key: not in its environment, nor by reading its
        # gateway's or parley's own process (both non-dumpable).
        seen = kernel.execute(
            "import os\n"
            "print(os.environ.get('OPENAI_API_KEY'))\n"
            "try:\n"
            f"    print({SECRET!r} in open(f'/proc/{{os.getppid()}}/environ').read())\n"
            "except OSError as error:\n    print(type(error).__name__)\n"
            f"try:\n    open('/proc/{os.getpid()}/environ').read()\n"
            "except OSError as error:\n    print(type(error).__name__)\n",
            timeout_seconds=30,
        )
        assert seen.output == "None\nPermissionError\nPermissionError\n"
        pids = kernel.execute(PIDS + "print(os.getppid())", timeout_seconds=30).output.split()
    kernel_pid, sleeper, gateway = map(int, pids)
    assert all(alive(pid) for pid in (kernel_pid, sleeper, gateway))
    server.stop()
    wait_until_gone(kernel_pid, sleeper, gateway)
    server.stop()  # a second stop does nothing
    with pytest.raises(JupyterGatewayError, match="could not be reached"):
        client.list_kernels()


def test_no_token_means_no_authentication() -> None:
    with LocalJupyterServer(token=None, log_file=None) as server:
        info = server.connection_info
        assert info.token is None
        assert "python3" in JupyterClient(info).list_kernel_specs()["kernelspecs"]


def test_a_gateway_open_to_the_network_needs_a_token() -> None:
    for ip in ("0.0.0.0", "192.0.2.1"):
        with pytest.raises(ValueError, match="without a token would let anyone"):
            LocalJupyterServer(ip=ip, token=None)


def gateways() -> set[int]:
    return set(processes_mentioning("-m kernel_gateway"))


def test_a_gateway_that_cannot_start_says_why(server: LocalJupyterServer) -> None:
    before = gateways()
    with pytest.raises(ValueError, match="Jupyter gateway server failed to start") as caught:
        LocalJupyterServer(port=server.port, log_file=None)  # the module's gateway has it
    assert "exited with code 1" in str(caught.value)
    assert "no available port" in str(caught.value)
    with pytest.raises(ValueError, match=r"did not answer within 0\.01 s"):
        LocalJupyterServer(log_file=None, startup_timeout=0.01)
    wait_until_gone(*(gateways() - before))


def test_https_and_secure_websockets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    openssl = shlex.split("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1")
    subprocess.run(
        [
            *openssl,
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the clients trust the self-signed cert
    with LocalJupyterServer(log_file=None, certfile=str(cert), keyfile=str(key)) as server:
        assert server.connection_info.use_https
        client = server.get_client()
        kernel_id = client.start_kernel("python3")
        with client.get_kernel_client(kernel_id) as kernel:  # wss://
            assert kernel.wait_for_ready(30)
            assert kernel.execute("print('over TLS')", timeout_seconds=30).output == "over TLS\n"
        plain = JupyterConnectionInfo("127.0.0.1", False, server.port, server.token)
        with pytest.raises(JupyterGatewayError):
            JupyterClient(plain).list_kernels()
