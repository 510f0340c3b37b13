"""The Ray cluster parley's tests, benchmark and docs start is not open to whoever reaches it
(issue 34, 7): with ``RAY_AUTH_MODE=disabled`` and node IP 127.0.0.2, the GCS and the raylet
listened on every interface and served any client.

The cluster is started as tests/batch/test_ray.py starts it (``_ray_cluster.Cluster``). Every
socket its processes listen on is either on a loopback address or, where Ray binds every
interface whatever the node IP, behind token authentication: a client without the token, or
with another one, is refused with an authentication error; with the token it connects. The
token is in no command line and no log of the cluster.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..batch._ray_cluster import (
    HOST,
    SESSION_TOKEN,
    SETUP_TIMEOUT,
    Cluster,
    raise_priority,
    short_root,
)

pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(SETUP_TIMEOUT)]

ROOT = Path(__file__).resolve().parents[2]
CLIENT_TIMEOUT = 240.0  # seconds a refused client may take to give up (a few when idle)
_CLIENT = """
import sys
import ray

try:
    ray.init(address=sys.argv[1], _node_ip_address=sys.argv[2], log_to_driver=False)
except Exception as error:
    print("REFUSED", type(error).__name__, error)
    sys.exit(3)
print("CONNECTED", int(ray.cluster_resources().get("CPU", 0)))
# A task starts a worker process, which listens too.
print("TASK", ray.get(ray.remote(lambda: 1).remote()))
ray.shutdown()
"""
# A harmless call to each gRPC service a cluster serves (an empty request): Ray's token check
# answers UNAUTHENTICATED before the service sees it; a port serves the services it does not
# answer UNIMPLEMENTED for.
PROBES = {
    "GCS": "/ray.rpc.NodeInfoGcsService/GetClusterId",
    "raylet": "/ray.rpc.NodeManagerService/GetNodeStats",
    "object manager": "/ray.rpc.ObjectManagerService/Pull",
    "core worker": "/ray.rpc.CoreWorkerService/NumPendingTasks",
}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    # Not imported here: Ray reads RAY_AUTH_MODE once, when this process first imports it.
    if importlib.util.find_spec("ray") is None:
        pytest.fail("ray is not installed: pip install 'parley[batch]'", pytrace=False)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    with short_root() as root:
        nodes = Cluster(root, env)
        try:
            nodes.start_head(num_cpus=1)
            nodes.add_nodes(["w0"], num_cpus=1)
            yield nodes
        finally:
            nodes.stop()


def _sockets(pids: list[int]) -> set[str]:
    inodes = set()
    for pid in pids:
        try:
            links = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
        except OSError:
            continue
        inodes.update(link[8:-1] for link in links if link.startswith("socket:["))
    return inodes


def _address(hex_ip: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    raw = bytes.fromhex(hex_ip)
    ordered = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return ipaddress.ip_address(ordered)


def _listening(pids: list[int]) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket the processes listen on."""
    inodes = _sockets(pids)
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:  # LISTEN
                ip, port = local.split(":")
                found.append((str(_address(ip)), int(port, 16)))
    return found


def _loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def _client(cluster: Cluster, home: Path, **auth: str) -> subprocess.CompletedProcess[str]:
    """A fresh driver connecting to the cluster's GCS with ``auth`` as its only Ray
    credentials (a HOME of its own: no ~/.ray/auth_token)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env.update(HOME=str(home), **auth)
    return subprocess.run(
        [sys.executable, "-c", _CLIENT, cluster.address, HOST],
        env=env,
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT,
        cwd=home,
    )


def _probe(port: int, method: str, token: str | None) -> str:
    """The gRPC status of ``method`` called on ``HOST:port`` (with ``token`` as Ray's bearer
    token, or none)."""
    import grpc

    metadata = None if token is None else [("authorization", f"Bearer {token}")]
    with grpc.insecure_channel(f"{HOST}:{port}") as channel:
        call = channel.unary_unary(
            method, request_serializer=lambda b: b, response_deserializer=lambda b: b
        )
        try:
            call(b"", timeout=60, metadata=metadata)
        except grpc.RpcError as error:
            return str(error.code().name)
    return "OK"


def test_every_listening_port_is_loopback_or_needs_the_token(
    cluster: Cluster, tmp_path: Path
) -> None:
    home = tmp_path / "with-token"
    home.mkdir()
    allowed = _client(cluster, home, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=SESSION_TOKEN)
    assert "CONNECTED 2" in allowed.stdout, allowed.stdout + allowed.stderr[-3000:]
    pids = cluster.processes() + [node.process.pid for node in cluster.nodes]
    listening = _listening(pids)
    assert listening, "the cluster's processes listen on nothing: they were not found"
    # (a) A port on loopback is out of other machines' reach. (b) Ray binds the GCS, the
    # raylets and the workers on every interface whatever --node-ip-address says: each such
    # port must be one of its gRPC services, and refuse a call without the token.
    exposed = sorted({port for address, port in listening if not _loopback(address)})
    for port in exposed:
        answers = {name: _probe(port, method, None) for name, method in PROBES.items()}
        served = {name: status for name, status in answers.items() if status != "UNIMPLEMENTED"}
        assert served, f"port {port} listens on every interface and is no Ray service known here"
        assert set(served.values()) == {"UNAUTHENTICATED"}, (
            f"port {port} answers without the token: {served}"
        )
    assert _probe(int(cluster.address.rsplit(":", 1)[1]), PROBES["GCS"], SESSION_TOKEN) == "OK"
    # A driver that reaches the GCS without the token, or with another one, is refused.
    for name, auth in {
        "no token": {},
        "token auth off": {"RAY_AUTH_MODE": "disabled"},
        "another token": {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "0" * 64},
    }.items():
        home = tmp_path / name.replace(" ", "-")
        home.mkdir()
        result = _client(cluster, home, **auth)
        out = result.stdout + result.stderr
        assert result.returncode != 0, f"{name}: a client connected to exposed ports {exposed}"
        assert "CONNECTED" not in out
        assert "InvalidAuthToken" in out, f"{name}: refused, but not for its token:\n{out[-3000:]}"


def test_the_token_is_in_no_command_line_and_no_log(cluster: Cluster) -> None:
    for pid in cluster.processes():
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        assert SESSION_TOKEN.encode() not in cmdline, (
            f"the token is on process {pid}'s command line"
        )
    logs = [p for p in cluster.root.rglob("*") if p.is_file() and p.stat().st_size < 50_000_000]
    assert logs
    leaked = [str(p) for p in logs if SESSION_TOKEN.encode() in p.read_bytes()]
    assert leaked == []


# -- the instance run_chats starts by itself --------------------------------------------------

_BATCH = """
import os
import sys

from parley import ConversableAgent
from parley.batch import RayBackend, run_chats


def solve(item):
    a = ConversableAgent("a", llm_config=False, human_input_mode="NEVER", default_auto_reply="ok")
    b = ConversableAgent("b", llm_config=False, human_input_mode="NEVER", default_auto_reply="ok")
    return item.initiate_chat(a, b, message=str(item.input), max_turns=1, silent=True)


options = dict(num_cpus=1, include_dashboard=False, _node_ip_address=sys.argv[1], log_to_driver=False)
batch = run_chats(solve, [1, 2], backend=RayBackend(workers=1, init_kwargs=options))
import ray

print("BATCH", batch.ok, os.environ.get("RAY_AUTH_MODE"), flush=True)
print("GCS", ray.get_runtime_context().gcs_address, flush=True)
sys.stdin.readline()  # the test probed the instance: end it
ray.shutdown()
"""


def test_the_instance_run_chats_starts_needs_a_token(tmp_path: Path) -> None:
    """With no Ray address and no authentication mode chosen, ``run_chats(backend="ray")``
    starts a single-machine instance; it must not serve a caller without its token, and the
    token is kept in no file."""
    home = tmp_path / "home"
    home.mkdir()
    ray_tmp = Path(os.path.realpath("/tmp")) / f"pr{os.getpid()}"  # short: Ray's socket paths
    ray_tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(
        HOME=str(home),
        RAY_TMPDIR=str(ray_tmp),
        PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    )
    errors = tmp_path / "stderr.txt"
    with (
        errors.open("w") as stderr,
        subprocess.Popen(
            [sys.executable, "-c", _BATCH, HOST],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,
            preexec_fn=raise_priority,  # the instance its batch starts inherits it
        ) as child,
    ):
        # A child that hangs is killed: its output ends, and the test fails instead of waiting.
        watchdog = threading.Timer(2 * CLIENT_TIMEOUT, os.killpg, (child.pid, 9))
        watchdog.start()
        try:
            assert child.stdout is not None
            assert child.stdin is not None
            lines = [child.stdout.readline(), child.stdout.readline()]
            assert lines[0].startswith("BATCH True token"), lines[0] + errors.read_text()[-3000:]
            gcs_port = int(lines[1].split()[1].rsplit(":", 1)[1])
            assert _probe(gcs_port, PROBES["GCS"], None) == "UNAUTHENTICATED"
            child.stdin.write("\n")
            child.stdin.flush()
            assert child.wait(timeout=CLIENT_TIMEOUT) == 0, errors.read_text()[-3000:]
            # The token lived in the process's environment only (Ray 2.60 and later would
            # otherwise make one and keep it in ~/.ray/auth_token; earlier versions no token).
            assert not (home / ".ray").exists()
        finally:
            watchdog.cancel()
            if child.poll() is None:
                os.killpg(child.pid, 9)
                child.wait(timeout=60)
            subprocess.run(["rm", "-rf", str(ray_tmp)], check=False)
