"""One long-lived, locked-down container that runs commands one at a time.

The container's first process (PID 1) is the *keeper* (``_keeper``): it reaps every
orphan (so killed processes never pile up as zombies against the PID limit) and, on ``SIGUSR1``,
kills every other process in the container. Each command runs through ``docker exec`` as::

    sh -c 'timeout -s KILL <backstop> <command> 2>&1; rc=$?; kill -KILL -1; exit $rc'

so whatever the command left behind (``server &``, a double-forked daemon, a ``setsid`` child)
is killed when it ends. The deadline is kept on the host: when it passes, the host signals PID 1,
which kills every process of the command whatever its process group or session, without needing
a new process in the container (a fork bomb may have taken every PID).

**Cancellation.** The host also kills the command that way as soon as the caller is cancelled:
:meth:`Sandbox.run` watches the token of the ``parley._core.runtime.run_in_thread`` call it runs under
(a cancelled chat task, Ctrl-C in a sync chat) and then raises
:class:`~parley.exceptions.ExecutionCancelledError`, the command's processes gone. Watching costs
no engine call: the token's callback wakes the wait for the command's output.

**The container dies with its owner** (unless made with ``lifeline=False``). It is created with
its stdin open (``OpenStdin``, ``StdinOnce``) and, before it starts, this process attaches a
connection to that stdin and holds it for the container's life: the *lifeline*
(``_lifeline``). When the connection closes — :meth:`Sandbox.close`, or the kernel
closing it because this process died, SIGKILL included — the engine closes the container's
stdin, the keeper reads end of file and exits, and the kernel kills every process of the
container. With ``auto_remove``, the engine then removes the container. A forked child of this process does not keep the connection
(its copy of the descriptor is replaced by ``/dev/null``), so the parent's death still counts.
The in-container ``timeout`` stays as the backstop for a block whose host process died without
the lifeline doing its work (a container without one, an engine on which that chain fails), and
``_owner.reap_orphans`` removes what is left over.

Nothing here blocks without a bound: the exec's output is read by a thread that the caller
waits for with a deadline, and the stream is closed if it outlives the kill.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..._core.runtime import CancelToken, current_token
from ...exceptions import ExecutionCancelledError
from .._process import MAX_OUTPUT_BYTES, CappedBuffer
from ._engine import connect, ensure_image
from ._keeper import keeper_entrypoint
from ._lifeline import Lifeline
from ._owner import OWNER_LABEL, SANDBOX_LABEL, owner_label, reap_orphans

if TYPE_CHECKING:
    from docker import APIClient, DockerClient

__all__ = ["WORKSPACE", "Ending", "RunResult", "Sandbox", "SandboxSettings"]

Ending = Literal["remove", "stop", "keep"]
"""What :meth:`Sandbox.close` does with the container."""

WORKSPACE = "/workspace"

# stderr joins stdout in one pipe: the engine copies two pipes concurrently and would shuffle
# lines written to both (a print before a traceback could come out in the middle of it).
_WRAPPER = 'timeout -s KILL "$0" "$@" 2>&1; rc=$?; kill -KILL -1 2>/dev/null; exit $rc'
_BACKSTOP_GRACE = 10.0  # seconds the in-container timeout gives the host's deadline
_DRAIN_SECONDS = 5.0  # to collect the output after a kill, before the stream is cut
_EXIT_POLL_SECONDS = 2.0  # for the engine to record an exec's exit code after its stream ended
_START_SECONDS = 60.0  # AutoGen waited as long for its container to run
_STOP_SECONDS = 5
_LOCK_POLL_SECONDS = 0.05  # how often a cancellable wait for another command's turn looks up


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
    read_only_binds: tuple[tuple[str, str], ...] = ()
    """More host folders the code sees, read-only: ``(host path, container path)`` pairs."""
    lifeline: bool = True
    """End the container when this process ends, however it ends (see the module's doc)."""
    auto_remove: bool = True
    """Have the engine remove the container once it has stopped (``AutoRemove``)."""


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
        self._lifeline: Lifeline | None = None
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
            self._container_id, self._lifeline = self._create(client.api, self._image)
            self._oom_kills = 0

    def _create(self, api: APIClient, image: str) -> tuple[str, Lifeline | None]:
        s = self.settings
        limits: dict[str, Any] = {}
        if s.network is False:
            limits["network_mode"] = "none"
        elif isinstance(s.network, str):
            limits["network_mode"] = s.network
        if s.mem_limit is not None:
            limits["mem_limit"] = s.mem_limit
            limits["memswap_limit"] = s.mem_limit  # no swap: the limit is the limit
        if s.pids_limit is not None:
            limits["pids_limit"] = s.pids_limit
        host_config = api.create_host_config(
            binds=[
                f"{s.bind_dir}:{WORKSPACE}:rw",
                *(f"{host}:{inside}:ro" for host, inside in s.read_only_binds),
            ],
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            read_only=s.read_only,
            tmpfs={"/tmp": f"rw,nosuid,nodev,size={s.tmpfs_size},mode=1777"},
            auto_remove=s.auto_remove,
            **limits,
        )
        config = api.create_container_config(
            image,
            None,
            entrypoint=keeper_entrypoint(s.lifeline),
            user=s.user,
            working_dir=WORKSPACE,
            volumes=[WORKSPACE],
            environment={"HOME": "/tmp", "PYTHONUNBUFFERED": "1", **s.environment},
            labels={SANDBOX_LABEL: "1", OWNER_LABEL: owner_label()},
            stdin_open=s.lifeline,
            detach=True,
            host_config=host_config,
        )
        # Close the container's stdin when the one attached connection does (docker-py's
        # config sets this only for attached runs, which also attach stdout and stderr).
        config["StdinOnce"] = s.lifeline
        container_id = str(api.create_container_from_config(config, name=s.name)["Id"])
        lifeline: Lifeline | None = None
        try:
            if s.lifeline:
                # Before the start: a container whose stdin nobody holds yet would see no end
                # of file if this process died in between.
                params = {"stdin": 1, "stream": 1}
                lifeline = Lifeline(api.attach_socket(container_id, params=params))
            api.start(container_id)
            deadline = time.monotonic() + _START_SECONDS
            status = _status(api, container_id)
            while status == "created" and time.monotonic() < deadline:
                time.sleep(0.05)
                status = _status(api, container_id)
            if status != "running":
                raise ValueError(f"Container failed to start: {status}\n{_logs(api, container_id)}")
        except BaseException:
            _remove(api, container_id, remove=True)
            if lifeline is not None:
                lifeline.close()
            raise
        return container_id, lifeline

    def run(self, command: list[str], timeout: float) -> RunResult:
        """Run ``command`` in the workspace; its processes are all gone when this returns.

        Raises :class:`~parley.exceptions.ExecutionCancelledError` if the
        ``parley._core.runtime.run_in_thread`` call this runs under is cancelled (the processes are
        gone then too).
        """
        import docker

        token = current_token()
        with _holding(self._run_lock, token):
            for attempt in (1, 2):
                self.start()
                try:
                    return self._exec(command, timeout, token)
                except docker.errors.APIError as error:
                    # The container was removed or stopped behind our back (``docker rm``, its
                    # PID 1 killed): make a new one, once.
                    gone = error.status_code in (404, 409)
                    if not gone or attempt == 2:
                        raise
                    self.remove_container()
            raise AssertionError("unreachable")

    def _exec(self, command: list[str], timeout: float, token: CancelToken | None) -> RunResult:
        client, container_id = self._client, self._container_id
        assert client is not None
        assert container_id is not None
        _check(token)  # the container may have taken a while to start
        api = client.api
        argv = ["/bin/sh", "-c", _WRAPPER, f"{timeout + _BACKSTOP_GRACE:g}", *command]
        exec_id = api.exec_create(container_id, argv, user=self.settings.user, workdir=WORKSPACE)
        stream = api.exec_start(exec_id["Id"], stream=True)
        buffer = CappedBuffer(MAX_OUTPUT_BYTES)
        ended = threading.Event()  # the output stream ended: so did the command
        wake = threading.Event()  # ended, or the caller was cancelled
        reader = threading.Thread(
            target=_pump,
            args=(stream, buffer, (ended, wake)),
            name="parley-docker-output",
            daemon=True,
        )
        reader.start()
        unregister = token.on_cancel(wake.set) if token is not None else _nothing
        cancelled = False
        try:
            timed_out = not wake.wait(timeout)
            cancelled = not ended.is_set() and token is not None and token.cancelled
            if timed_out or cancelled:
                _kill_all(client, container_id)
                ended.wait(_DRAIN_SECONDS)
        except BaseException:  # KeyboardInterrupt in the calling thread: the code must not go on
            _kill_all(client, container_id)
            raise
        finally:
            unregister()
            _close_stream(stream)  # also cuts a stream something still holds open after a kill
            reader.join(_DRAIN_SECONDS)
        if cancelled:
            raise ExecutionCancelledError("the code block was stopped: its chat was cancelled")
        # The client and container of this run: close() may clear the fields meanwhile.
        exit_code = _exit_code(client, exec_id["Id"])
        output = buffer.text()
        if timed_out:
            return RunResult(124, output, timed_out=True, out_of_memory=False)
        out_of_memory = exit_code == 137 and self._new_oom_kill(client, container_id)
        return RunResult(exit_code, output, timed_out=False, out_of_memory=out_of_memory)

    def _new_oom_kill(self, client: DockerClient, container_id: str) -> bool:
        """Whether the kernel's OOM killer struck in the container since the last check."""
        import docker

        # cgroup v2, then v1; both have an "oom_kill <count>" line.
        files = "/sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control"
        try:
            _, raw = client.containers.get(container_id).exec_run(
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
            lifeline, self._lifeline = self._lifeline, None
            client = self._client
        try:
            if client is not None and container_id is not None:
                _remove(client.api, container_id, remove=True)
        finally:
            if lifeline is not None:
                lifeline.close()

    def close(self, how: Ending = "remove") -> None:
        """End the container — ``"remove"`` it, ``"stop"`` it, or ``"keep"`` it running — and
        release the engine connection.

        A container on a lifeline ends with it, so ``"keep"`` keeps only one made with
        ``lifeline=False``. Safe to call more than once and at interpreter exit; engine errors
        are ignored, since there is nothing left to do about them.
        """
        with self._state_lock:
            container_id, self._container_id = self._container_id, None
            lifeline, self._lifeline = self._lifeline, None
            client, self._client = self._client, None
        try:
            if client is not None and container_id is not None and how != "keep":
                # Before the lifeline goes: removing a container that is still running is
                # one call that returns once it is gone, with no race against AutoRemove.
                _remove(client.api, container_id, remove=how == "remove")
        finally:
            if lifeline is not None:
                lifeline.close()
            if client is not None:
                client.close()


def _nothing() -> None:
    pass


def _exit_code(client: DockerClient, exec_id: str) -> int:
    deadline = time.monotonic() + _EXIT_POLL_SECONDS
    while True:
        info = client.api.exec_inspect(exec_id)
        if not info.get("Running") and info.get("ExitCode") is not None:
            return int(info["ExitCode"])
        if time.monotonic() >= deadline:
            return 1
        time.sleep(0.01)


def _check(token: CancelToken | None) -> None:
    if token is not None and token.cancelled:
        raise ExecutionCancelledError("the code block was not run: its chat was cancelled")


@contextmanager
def _holding(lock: threading.Lock, token: CancelToken | None) -> Iterator[None]:
    """Hold ``lock``; while another command has it, give up if ``token`` is cancelled.

    The wait itself is bounded by the other command's timeout.
    """
    if token is None:
        lock.acquire()
    else:
        while not lock.acquire(timeout=_LOCK_POLL_SECONDS):
            _check(token)
    try:
        yield
    finally:
        lock.release()


def _status(api: APIClient, container_id: str) -> str:
    """The container's state ("running", "exited"...); "removed" if it is gone (AutoRemove)."""
    import docker

    try:
        return str(api.inspect_container(container_id)["State"]["Status"])
    except docker.errors.NotFound:
        return "removed"


def _logs(api: APIClient, container_id: str) -> str:
    import docker

    try:
        return str(api.logs(container_id).decode("utf-8", "replace"))
    except docker.errors.DockerException:
        return ""


def _kill_all(client: DockerClient, container_id: str) -> None:
    """Have PID 1 kill every other process in the container."""
    import docker

    try:
        client.api.kill(container_id, "SIGUSR1")
    except docker.errors.APIError:
        pass  # the container is gone: so are its processes


def _remove(api: APIClient, container_id: str, *, remove: bool) -> None:
    import docker

    try:
        if remove:
            api.remove_container(container_id, force=True)
        else:
            api.stop(container_id, timeout=_STOP_SECONDS)
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


def _pump(stream: Iterator[bytes], buffer: CappedBuffer, done: tuple[threading.Event, ...]) -> None:
    """Feed the exec's output to ``buffer`` until it ends or is cut; then set ``done``."""
    try:
        for chunk in stream:
            buffer.feed(chunk)
    except Exception:  # the stream was closed under us after a timeout: nothing more to read
        pass
    finally:
        for event in done:
            event.set()
