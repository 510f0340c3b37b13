"""One long-lived, locked-down container that runs commands one at a time.

The container's first process (PID 1) is a few lines of ``sh`` that sleep, reap every orphan
(so killed processes never pile up as zombies against the PID limit) and, on ``SIGUSR1``, kill
every other process in the container with ``kill -KILL -1``. Each command runs through
``docker exec`` as::

    sh -c 'timeout -s KILL <backstop> <command> 2>&1; rc=$?; kill -KILL -1; exit $rc'

so whatever the command left behind (``server &``, a double-forked daemon, a ``setsid`` child)
is killed when it ends. The deadline is kept on the host: when it passes, the host signals PID 1,
which kills every process of the command whatever its process group or session, without needing
a new process in the container (a fork bomb may have taken every PID). The in-container
``timeout`` is only a backstop for when the host process dies mid-command.

Nothing here blocks without a bound: the exec's output is read by a thread that the caller
waits for with a deadline, and the stream is closed if it outlives the kill.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ._docker_engine import connect, ensure_image
from ._docker_owner import OWNER_LABEL, SANDBOX_LABEL, owner_label, reap_orphans
from ._process import MAX_OUTPUT_BYTES, _CappedBuffer

if TYPE_CHECKING:
    from collections.abc import Iterator

    from docker import DockerClient

__all__ = ["WORKSPACE", "Ending", "RunResult", "Sandbox", "SandboxSettings"]

Ending = Literal["remove", "stop", "keep"]
"""What :meth:`Sandbox.close` does with the container."""

WORKSPACE = "/workspace"

# PID 1. `wait` returns early when a trapped signal arrives, then the trap runs. dash and bash
# wait with waitpid(-1), which also reaps the orphans the kernel re-parents to PID 1.
_KEEPER = (
    "trap 'kill -KILL -1 2>/dev/null' USR1; trap 'exit 0' TERM INT; "
    "while :; do sleep 86400 & wait $!; done"
)
# stderr joins stdout in one pipe: the engine copies two pipes concurrently and would shuffle
# lines written to both (a print before a traceback could come out in the middle of it).
_WRAPPER = 'timeout -s KILL "$0" "$@" 2>&1; rc=$?; kill -KILL -1 2>/dev/null; exit $rc'
_BACKSTOP_GRACE = 10.0  # seconds the in-container timeout gives the host's deadline
_DRAIN_SECONDS = 5.0  # to collect the output after a kill, before the stream is cut
_EXIT_POLL_SECONDS = 2.0  # for the engine to record an exec's exit code after its stream ended
_START_SECONDS = 60.0  # AutoGen waited as long for its container to run
_STOP_SECONDS = 5


@dataclass(frozen=True)
class SandboxSettings:
    """How the container is made. ``None`` limits mean unlimited."""

    images: tuple[str, ...]
    name: str
    bind_dir: str
    user: str
    network: bool | str = False
    mem_limit: str | int | None = "512m"
    pids_limit: int | None = 256
    read_only: bool = True
    tmpfs_size: str = "256m"
    environment: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunResult:
    """How a command ended. ``exit_code`` is the command's, even after a timeout."""

    exit_code: int
    output: str
    timed_out: bool
    out_of_memory: bool


class Sandbox:
    """The container of one executor: started on first use, removed by :meth:`close`."""

    def __init__(self, settings: SandboxSettings) -> None:
        self.settings = settings
        self._client: DockerClient | None = None
        self._container_id: str | None = None
        self._image: str | None = None
        self._oom_kills = 0
        self._run_lock = threading.Lock()  # one command at a time
        self._state_lock = threading.Lock()  # guards the fields above; never held for long

    @property
    def image(self) -> str | None:
        """The image in use, once the container has been started."""
        return self._image

    @property
    def container_id(self) -> str | None:
        return self._container_id

    def start(self) -> None:
        """Create and start the container unless it is already there."""
        with self._state_lock:
            if self._container_id is not None:
                return
            if self._client is None:
                self._client = connect()
            client = self._client
            reap_orphans(client)
            self._image = ensure_image(client, self.settings.images)
            self._container_id = self._create(client, self._image)
            self._oom_kills = 0

    def _create(self, client: DockerClient, image: str) -> str:
        s = self.settings
        options: dict[str, Any] = {
            "entrypoint": ["/bin/sh", "-c", _KEEPER],
            "name": s.name,
            "user": s.user,
            "working_dir": WORKSPACE,
            "volumes": {s.bind_dir: {"bind": WORKSPACE, "mode": "rw"}},
            "environment": {"HOME": "/tmp", "PYTHONUNBUFFERED": "1", **s.environment},
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "read_only": s.read_only,
            "tmpfs": {"/tmp": f"rw,nosuid,nodev,size={s.tmpfs_size},mode=1777"},
            "labels": {SANDBOX_LABEL: "1", OWNER_LABEL: owner_label()},
            "detach": True,
        }
        if s.network is False:
            options["network_mode"] = "none"
        elif isinstance(s.network, str):
            options["network_mode"] = s.network
        if s.mem_limit is not None:
            options["mem_limit"] = s.mem_limit
            options["memswap_limit"] = s.mem_limit  # no swap: the limit is the limit
        if s.pids_limit is not None:
            options["pids_limit"] = s.pids_limit
        container = client.containers.create(image, **options)
        try:
            container.start()
            deadline = time.monotonic() + _START_SECONDS
            container.reload()
            while container.status == "created" and time.monotonic() < deadline:
                time.sleep(0.05)
                container.reload()
            if container.status != "running":
                logs = container.logs().decode("utf-8", "replace")
                raise ValueError(f"Container failed to start: {container.status}\n{logs}")
        except BaseException:
            container.remove(force=True)
            raise
        return str(container.id)

    def run(self, command: list[str], timeout: float) -> RunResult:
        """Run ``command`` in the workspace; its processes are all gone when this returns."""
        import docker

        with self._run_lock:
            for attempt in (1, 2):
                self.start()
                try:
                    return self._exec(command, timeout)
                except docker.errors.APIError as error:
                    # The container was removed or stopped behind our back (``docker rm``, its
                    # PID 1 killed): make a new one, once.
                    gone = error.status_code in (404, 409)
                    if not gone or attempt == 2:
                        raise
                    self.remove_container()
            raise AssertionError("unreachable")

    def _exec(self, command: list[str], timeout: float) -> RunResult:
        client, container_id = self._client, self._container_id
        assert client is not None
        assert container_id is not None
        api = client.api
        argv = ["/bin/sh", "-c", _WRAPPER, f"{timeout + _BACKSTOP_GRACE:g}", *command]
        exec_id = api.exec_create(container_id, argv, user=self.settings.user, workdir=WORKSPACE)
        stream = api.exec_start(exec_id["Id"], stream=True)
        buffer = _CappedBuffer(MAX_OUTPUT_BYTES)
        done = threading.Event()
        reader = threading.Thread(
            target=_pump, args=(stream, buffer, done), name="parley-docker-output", daemon=True
        )
        reader.start()
        try:
            timed_out = not done.wait(timeout)
            if timed_out:
                _kill_all(client, container_id)
                done.wait(_DRAIN_SECONDS)
        except BaseException:  # KeyboardInterrupt, a cancelled worker: the code must not go on
            _kill_all(client, container_id)
            raise
        finally:
            _close_stream(stream)  # also cuts a stream something still holds open after a kill
            reader.join(_DRAIN_SECONDS)
        exit_code = self._exit_code(exec_id["Id"])
        output = buffer.text()
        if timed_out:
            return RunResult(124, output, timed_out=True, out_of_memory=False)
        out_of_memory = exit_code == 137 and self._new_oom_kill()
        return RunResult(exit_code, output, timed_out=False, out_of_memory=out_of_memory)

    def _exit_code(self, exec_id: str) -> int:
        assert self._client is not None
        deadline = time.monotonic() + _EXIT_POLL_SECONDS
        while True:
            info = self._client.api.exec_inspect(exec_id)
            if not info.get("Running") and info.get("ExitCode") is not None:
                return int(info["ExitCode"])
            if time.monotonic() >= deadline:
                return 1
            time.sleep(0.01)

    def _new_oom_kill(self) -> bool:
        """Whether the kernel's OOM killer struck in the container since the last check."""
        import docker

        assert self._client is not None
        assert self._container_id is not None
        # cgroup v2, then v1; both have an "oom_kill <count>" line.
        files = "/sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control"
        try:
            _, raw = self._client.containers.get(self._container_id).exec_run(
                ["/bin/sh", "-c", f"cat {files} 2>/dev/null"], user=self.settings.user
            )
        except docker.errors.DockerException:
            raw = b""
        counts = [
            int(line.split()[1])
            for line in raw.decode("utf-8", "replace").splitlines()
            if line.startswith("oom_kill ") and line.split()[1].isdigit()
        ]
        if not counts:
            return True  # no way to tell: a SIGKILL here is most likely the memory limit
        seen, self._oom_kills = self._oom_kills, max(counts)
        return max(counts) > seen

    def remove_container(self) -> None:
        """Remove the container now; the next :meth:`run` starts a new one."""
        with self._state_lock:
            container_id, self._container_id = self._container_id, None
            client = self._client
        if client is not None and container_id is not None:
            _remove(client, container_id, remove=True)

    def close(self, how: Ending = "remove") -> None:
        """End the container — ``"remove"`` it, ``"stop"`` it, or ``"keep"`` it running — and
        release the engine connection.

        Safe to call more than once and at interpreter exit; engine errors are ignored, since
        there is nothing left to do about them.
        """
        with self._state_lock:
            container_id, self._container_id = self._container_id, None
            client, self._client = self._client, None
        if client is None:
            return
        try:
            if container_id is not None and how != "keep":
                _remove(client, container_id, remove=how == "remove")
        finally:
            client.close()


def _kill_all(client: DockerClient, container_id: str) -> None:
    """Have PID 1 kill every other process in the container."""
    import docker

    try:
        client.api.kill(container_id, "SIGUSR1")
    except docker.errors.APIError:
        pass  # the container is gone: so are its processes


def _remove(client: DockerClient, container_id: str, *, remove: bool) -> None:
    import docker

    try:
        if remove:
            client.api.remove_container(container_id, force=True)
        else:
            client.api.stop(container_id, timeout=_STOP_SECONDS)
    except docker.errors.DockerException:
        pass  # already gone, or the engine is: either way nothing runs there any more


def _close_stream(stream: Any) -> None:
    """Close an exec output stream and the HTTP response under it.

    docker-py's ``CancellableStream.close`` only shuts the socket of a response still open; a
    stream read to its end leaves the response, and with it the socket, for the garbage
    collector (a ResourceWarning).
    """
    stream.close()
    response = getattr(stream, "_response", None)
    if response is not None:
        response.close()


def _pump(stream: Iterator[bytes], buffer: _CappedBuffer, done: threading.Event) -> None:
    """Feed the exec's output to ``buffer`` until it ends or is cut; then set ``done``."""
    try:
        for chunk in stream:
            buffer.feed(chunk)
    except Exception:  # the stream was closed under us after a timeout: nothing more to read
        pass
    finally:
        done.set()
