"""A real Ray cluster on loopback for the tests: ``ray start --head`` and worker nodes, each
``ray start --block`` in a process group of its own, so a test can kill one node (SIGKILL to
its group: its raylet, its agents and its workers) and teardown can stop exactly what it
started (``ray stop`` would stop every Ray process of the machine).

Ray's token authentication is on (``RAY_AUTH_MODE=token``): without it anyone who can reach the
GCS or a raylet runs code on the cluster, and some of their ports listen on every interface
whatever ``--node-ip-address`` says (tests/security/test_ray_exposure.py). The token is random,
one per test session (:data:`SESSION_TOKEN`; a process's Ray client keeps the first token it
loads), and goes to the nodes and the driver (:func:`auth_env`) in the environment only: never on
a command line, in a file or in a log.

Every node uses 127.0.0.2: Ray rewrites ``127.0.0.1`` and ``localhost`` in an address to the
machine's network address (so that other machines could reach it); ``127.0.0.2`` is loopback
too and is left as it is. Every port is chosen here, as the defaults (the dashboard agent's,
the client server's, the worker ports) are fixed numbers that several nodes on one machine
would share.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from parley.batch._ray_start import REGISTRATION_WAIT

HOST = "127.0.0.2"
# Seconds for a node to say it started (a few on an idle machine): longer than the wait for its
# raylet to register (REGISTRATION_WAIT, 120 s in Cluster), so that the wait, not this, decides.
START_TIMEOUT = 200.0
# Seconds a node may take over all its attempts. The fixtures start up to three nodes, so a
# module that starts a cluster runs with SETUP_TIMEOUT (pytest-timeout counts fixture setup).
START_BUDGET = 420.0
SETUP_TIMEOUT = 3 * START_BUDGET + 600
STOP_TIMEOUT = 15.0
PRIORITY = -10  # the nice value of the cluster's processes, where it can be raised
GRACE = 3.0  # seconds a node is given to stop on SIGTERM before SIGKILL
MARKER = "PARLEY_TEST_RAY_CLUSTER"  # in every process of the cluster: what teardown looks for
_RAY_NODE = str(Path(__file__).with_name("_ray_node.py"))
# Each node's workers take ports from a range of their own.
_WORKER_PORTS = 40
SESSION_TOKEN = secrets.token_hex(32)


def raise_priority() -> None:
    """In a child before it runs (``preexec_fn``): a higher CPU priority where this process may
    give one (root, as in CI). Ray gives a starting node fixed waits (30 s for its raylet to
    register); with other test workers using both cores, a Ray process of normal priority got
    too little of them to meet those, and the cluster did not start. Elsewhere nothing changes
    (and START_BUDGET's retries are what remains)."""
    with contextlib.suppress(PermissionError):
        os.setpriority(os.PRIO_PROCESS, 0, PRIORITY)


def auth_env() -> dict[str, str]:
    """The environment that turns Ray's token authentication on with this session's token."""
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": SESSION_TOKEN}


@contextlib.contextmanager
def short_root() -> Iterator[Path]:
    """A folder for a cluster's logs and Ray's session files, removed afterwards. Short: Ray
    puts Unix sockets in it, whose paths have at most 107 bytes, and a parallel test worker's
    tmp_path (``.../pytest-N/popen-gwN/...``) left too few for Ray's session folder."""
    root = Path(tempfile.mkdtemp(prefix="parley-ray-"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _free_range(size: int) -> int:
    """The first of ``size`` consecutive ports free now (the start of a random free one)."""
    for _ in range(200):
        start = free_port()
        if start + size >= 65000:
            continue
        ports = []
        try:
            for p in range(start, start + size):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                ports.append(sock)
                sock.bind((HOST, p))
            return start
        except OSError:
            continue
        finally:
            for sock in ports:
                sock.close()
    raise RuntimeError("no free range of ports")


@dataclass
class Node:
    name: str
    process: subprocess.Popen[bytes]
    log: Path
    marker: str  # the value of MARKER in the environment of each of its processes

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL the node as a machine dies: its process group (``ray start``, the raylet,
        the agents) and its worker processes, which Ray puts in groups of their own."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        for pid in processes(self.marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(STOP_TIMEOUT)


@dataclass
class Cluster:
    """Nodes started with ``ray start --block``; ``address`` is the head's GCS."""

    root: Path
    env: dict[str, str]
    address: str = ""
    nodes: list[Node] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.id = uuid.uuid4().hex
        # Ray's own wait for a starting node to register, longer than its 10 s default (as
        # parley's RayBackend makes it for an instance it starts: parley/batch/_ray_start.py).
        self.env = {REGISTRATION_WAIT: "120", **self.env, **auth_env()}

    def start_head(self, num_cpus: int = 1, **resources: float) -> Node:
        port = free_port()
        self.address = f"{HOST}:{port}"
        return self._start(
            "head",
            [
                "--head",
                f"--port={port}",
                "--include-dashboard=false",
                # No autoscaler (these clusters have fixed nodes): its metrics server listens
                # on every interface, on a fixed port, without authentication.
                "--no-monitor",
                f"--ray-client-server-port={free_port()}",
                f"--temp-dir={self.root / 'ray'}",
            ],
            num_cpus,
            resources,
        )

    def add_nodes(self, names: list[str], num_cpus: int = 1) -> list[Node]:
        """Worker nodes; node ``name`` has one unit of resource ``name`` (for a task that
        must run there). One after the other: a starting node finds its raylet by its IP
        address, which all nodes here share, and two starting at once can miss it."""
        return [
            self._start(name, [f"--address={self.address}"], num_cpus, {name: 1}) for name in names
        ]

    def _start(
        self, name: str, args: list[str], num_cpus: int, resources: dict[str, float]
    ) -> Node:
        # A node that does not start (its raylet aborted, or did not register in time) is
        # killed at once and started again, until START_BUDGET seconds are spent.
        deadline = time.monotonic() + START_BUDGET
        while True:
            node = self._launch(name, args, num_cpus, resources)
            try:
                return self._wait(node)
            except RuntimeError:
                node.kill()
                self.nodes.remove(node)
                if time.monotonic() >= deadline:
                    raise

    def _launch(
        self, name: str, args: list[str], num_cpus: int, resources: dict[str, float]
    ) -> Node:
        low = _free_range(_WORKER_PORTS)
        command = [
            sys.executable,
            _RAY_NODE,  # `ray start`, its raylet told the agent's port
            "start",
            "--block",
            *args,
            f"--node-ip-address={HOST}",
            f"--num-cpus={num_cpus}",
            f"--resources={_json(resources)}",
            "--object-store-memory=100000000",
            f"--node-manager-port={free_port()}",
            f"--object-manager-port={free_port()}",
            f"--dashboard-agent-listen-port={free_port()}",
            f"--dashboard-agent-grpc-port={free_port()}",
            f"--metrics-export-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}",
            f"--min-worker-port={low}",
            f"--max-worker-port={low + _WORKER_PORTS - 1}",
            "--disable-usage-stats",
            "--log-style=record",
        ]
        log = self.root / f"{name}.log"
        marker = f"{self.id}/{name}"
        with log.open("wb") as out:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={
                    **self.env,
                    MARKER: marker,
                    "PARLEY_RAYLET": str(self.root / f"{name}.raylet"),
                },
                start_new_session=True,  # its own group: killed whole, and only it
                preexec_fn=raise_priority,
            )
        node = Node(name, process, log, marker)
        self.nodes.append(node)
        return node

    def _wait(self, node: Node) -> Node:
        deadline = time.monotonic() + START_TIMEOUT
        aborts_before = len(self._raylet_aborts())
        while time.monotonic() < deadline:
            if "Ray runtime started" in node.log.read_text(errors="replace"):
                return node
            if not node.alive() or len(self._raylet_aborts()) > aborts_before:
                break
            time.sleep(0.2)
        text = node.log.read_text(errors="replace")[-4000:]
        aborts = "".join(f"\n{line}" for line in self._raylet_aborts()[aborts_before:])
        raise RuntimeError(
            f"ray node {node.name} did not start; its log:\n{text}\n--- raylet aborts:{aborts}"
            f"{self._raylet_logs()}"
        )

    def _raylet_logs(self) -> str:
        """The ends of the newest raylet logs under the cluster's folder: why a node did not
        register (its own log says only that it timed out)."""
        logs = sorted(self._raylet_log_files(), key=_mtime)[-2:]
        return "".join(
            f"\n--- {log.name}:\n{log.read_text(errors='replace')[-3000:]}" for log in logs
        )

    def _raylet_log_files(self) -> list[Path]:
        return list(self.root.glob("**/logs/raylet*.[oe][ur][tr]"))

    def _raylet_aborts(self) -> list[str]:
        """The fatal lines ("Check failed: ...", the reason a raylet aborted) in the raylets'
        logs under the cluster's folder, oldest log first."""
        lines = []
        for log in sorted(self._raylet_log_files(), key=_mtime):
            if log.suffix == ".out":  # the .err file repeats the same lines
                text = log.read_text(errors="replace")
                lines += [line[:600] for line in text.splitlines() if "Check failed" in line]
        return lines

    def stop(self) -> None:
        """Stop every node started here: SIGTERM to each group, SIGKILL to what is left after
        a few seconds, then to the worker processes the nodes started (each in a group of
        its own), found by the marker in their environment."""
        for node in reversed(self.nodes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(node.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + GRACE
        for node in reversed(self.nodes):
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(max(0.1, deadline - time.monotonic()))
        for node in self.nodes:
            # The group outlives its leader while a daemon it started is still there.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(node.process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(STOP_TIMEOUT)
        deadline = time.monotonic() + STOP_TIMEOUT
        while (left := self.processes()) and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)

    def processes(self) -> list[int]:
        """The live processes this cluster started."""
        return processes(f"{self.id}/")


def processes(marker: str) -> list[int]:
    """The live processes whose MARKER starts with ``marker``."""
    prefix = f"{MARKER}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # gone, or not ours to read
            continue
        if state != "Z" and any(v.startswith(prefix) for v in environ.split(b"\0")):
            found.append(int(entry.name))
    return found


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _json(resources: dict[str, float]) -> str:
    import json

    return json.dumps(resources)


def outside_connections(pids: list[int]) -> list[str]:
    """The TCP connections of processes ``pids`` to an address that is not loopback (there
    must be none: the cluster talks over 127.0.0.2)."""
    sockets = set()
    for pid in pids:
        try:
            links = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
        except OSError:  # the process ended meanwhile
            continue
        sockets.update(link[8:-1] for link in links if link.startswith("socket:["))
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            remote, state, inode = fields[2], fields[3], fields[9]
            if inode in sockets and state == "01":  # ESTABLISHED
                address = _address(remote.split(":")[0])
                if not _loopback(address):
                    found.append(f"{address} (socket {inode})")
    return found


def _address(hex_ip: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address of /proc/net/tcp*: 32-bit words in the host's (little-endian) order."""
    raw = bytes.fromhex(hex_ip)
    ordered = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return ipaddress.ip_address(ordered)


def _loopback(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)
