"""A Jupyter Kernel Gateway in a locked-down container (AutoGen's ``DockerJupyterServer``).

The container is the Docker executor's sandbox (``parley.coding.docker._sandbox``: non-root,
no capabilities, read-only root file system, memory and process limits, removed when its owner
stops it or dies, SIGKILL included); the gateway runs in it as the ``sandbox`` user, started by
``docker exec`` once the container is up, and the kernels it starts run there too.

Differences from AutoGen, on purpose:

* **The image is built, not pulled.** ``custom_image_name=None`` uses ``$PARLEY_JUPYTER_IMAGE``
  or ``parley-jupyter:latest``, which ``parley sandbox build --jupyter`` makes from Debian's
  packages (or from a Dockerfile where a registry is reachable); AutoGen built its image from a
  ``quay.io`` base. A missing image is an error naming that command, not a build started behind
  the caller's back.
* **No network for the code.** The container sits on ``parley-jupyter``, an *internal* Docker
  network without a route out and without traffic between containers; parley reaches the
  gateway at the container's address on it. (Publishing a port, as AutoGen did, needs a
  network with a route out.) ``network=True`` puts it on the engine's default network instead.
  A process in the container can still reach services that listen on the host's address on
  that network (the gateway address), as with any Docker network.
* **A work dir.** ``work_dir`` (default: a private temporary directory removed by :meth:`stop`)
  is mounted at ``/workspace``, the kernels' working directory, so files the code writes can be
  read on the host. One holding a cache, a virtualenv, parley's sources, a git repository, a
  config list, ``.env`` or runtime log is refused (``UnsafeWorkDirError``, as the executors'
  work dirs: ``parley.coding._work_dir``).
* ``stop_container=False`` leaves the container running when the process exits; :meth:`stop`
  still stops it (as in AutoGen).

The token is handed to the gateway in its environment (``KG_AUTH_TOKEN``); kernels inherit it,
so it keeps other local users out, not the code the gateway runs (which can already do anything
the gateway can).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import tempfile
import time
import uuid
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._core.lifetime import StopsOnExit
from ...exceptions import JupyterGatewayError
from .._code_user import choose_user, prepare_work_dir
from .._work_dir import check_work_dir
from ..docker._engine import connect, find_image
from ..docker._sandbox import WORKSPACE, Ending, Sandbox, SandboxSettings
from .base import JupyterConnectionInfo
from .jupyter_client import JupyterClient

if TYPE_CHECKING:
    from docker import DockerClient

__all__ = ["DockerJupyterServer"]

INTERNAL_NETWORK = "parley-jupyter"
GATEWAY_PORT = 8888
_READY_SECONDS = 60.0
_NETWORK_LOCK_SECONDS = 30.0  # looking and creating take well under a second
_LOG = "/tmp/kernel-gateway.log"


class DockerJupyterServer(StopsOnExit):
    """A Jupyter Kernel Gateway in a container; a :class:`JupyterConnectable`."""

    class GenerateToken:
        """Marker default of ``token``: a new random token for each server."""

    def __init__(
        self,
        *,
        custom_image_name: str | None = None,
        container_name: str | None = None,
        auto_remove: bool = True,
        stop_container: bool = True,
        docker_env: Mapping[str, str] | None = None,
        token: str | GenerateToken = GenerateToken(),  # noqa: B008 - AutoGen's signature
        work_dir: Path | str | None = None,
        network: bool | str = False,
        mem_limit: str | int | None = "1g",
        pids_limit: int | None = 256,
        **docker_kwargs: Any,
    ) -> None:
        """AutoGen's parameters, then parley's: ``work_dir`` (mounted at ``/workspace``),
        ``network`` (True: the engine's default network, or a network's name), ``mem_limit``
        and ``pids_limit``. ``docker_kwargs`` is not supported (the container's settings are
        the sandbox's); passing any raises ValueError rather than ignoring them.
        ``token=""`` turns authentication off.
        """
        from ..images import image_candidates

        if docker_kwargs:
            raise ValueError(
                f"DockerJupyterServer does not take docker_kwargs ({', '.join(docker_kwargs)}): "
                "the container is parley's locked-down sandbox; use network=, mem_limit=, "
                "pids_limit= or work_dir="
            )
        if work_dir is not None:
            # Mounted read-write for the kernels: never a folder holding a cache, keys or logs.
            check_work_dir(work_dir)
        self._token = secrets.token_hex(32) if isinstance(token, self.GenerateToken) else token
        self._client = connect()  # RuntimeError saying what to do without an engine
        self._own_dir: str | None = None
        if work_dir is None:
            self._own_dir = tempfile.mkdtemp(prefix="parley-jupyter-")
            work_dir = self._own_dir
        work_dir = Path(work_dir)
        work_dir.mkdir(exist_ok=True)
        self._user = choose_user(work_dir)
        prepare_work_dir(work_dir, self._user, fresh=not any(work_dir.iterdir()))
        self._work_dir = work_dir
        self._sandbox = Sandbox(
            SandboxSettings(
                images=(custom_image_name,)
                if custom_image_name
                else tuple(image_candidates("jupyter")),
                name=container_name or f"parley-jupyter-{uuid.uuid4()}",
                bind_dir=str(work_dir.resolve()),
                user=self._user,
                network=INTERNAL_NETWORK if network is False else network,
                mem_limit=mem_limit,
                pids_limit=pids_limit,
                lifeline=stop_container,
                auto_remove=auto_remove and stop_container,
            )
        )
        ending: Ending = ("remove" if auto_remove else "stop") if stop_container else "keep"
        self._finalizer = weakref.finalize(
            self, _close, self._sandbox, ending, self._own_dir, self._client
        )
        try:
            self._host = self._start(custom_image_name, dict(docker_env or {}), network)
        except BaseException:
            self.stop()
            raise

    @property
    def connection_info(self) -> JupyterConnectionInfo:
        """Where the gateway listens: the container's address on its network, port 8888."""
        return JupyterConnectionInfo(
            host=self._host, use_https=False, port=GATEWAY_PORT, token=self._token or None
        )

    @property
    def work_dir(self) -> Path:
        """The host directory mounted at ``/workspace``, the kernels' working directory."""
        return self._work_dir

    @property
    def container_name(self) -> str:
        return self._sandbox.settings.name

    def get_client(self) -> JupyterClient:
        """A REST and websocket client of the gateway."""
        return JupyterClient(self.connection_info)

    def stop(self) -> None:
        """Stop the gateway and its kernels and remove the container (its own work dir too)."""
        self._finalizer()

    # -- starting -------------------------------------------------------------------------------

    def _start(self, custom_image: str | None, env: dict[str, str], network: bool | str) -> str:
        _check_image(self._client, custom_image)
        if network is False:
            _ensure_internal_network(self._client)
        self._sandbox.start()
        container_id = self._sandbox.container_id
        assert container_id is not None
        api = self._client.api
        command = (
            f"exec python -m kernel_gateway --KernelGatewayApp.ip=0.0.0.0 "
            f"--KernelGatewayApp.port={GATEWAY_PORT} --KernelGatewayApp.port_retries=0 "
            f"--JupyterWebsocketPersonality.list_kernels=True > {_LOG} 2>&1"
        )
        # Not Sandbox.run: its wrapper kills every process of the container when a command ends.
        exec_id = api.exec_create(
            container_id,
            ["/bin/sh", "-c", command],
            user=self._user,
            workdir=WORKSPACE,
            environment={"KG_AUTH_TOKEN": self._token, "HOME": "/tmp", **env},
        )
        api.exec_start(exec_id["Id"], detach=True)
        networks = api.inspect_container(container_id)["NetworkSettings"]["Networks"]
        host = next((str(n["IPAddress"]) for n in networks.values() if n.get("IPAddress")), "")
        if not host:
            raise ValueError(f"the container {self.container_name} has no network address")
        self._wait_ready(host, container_id)
        return host

    def _wait_ready(self, host: str, container_id: str) -> None:
        info = JupyterConnectionInfo(host, False, GATEWAY_PORT, self._token or None)
        client = JupyterClient(info)
        deadline = time.monotonic() + _READY_SECONDS
        while time.monotonic() < deadline:
            try:
                client.list_kernel_specs()
                return
            except JupyterGatewayError:
                pass
            if self._shell(container_id, "pgrep -f kernel_gateway")[0] != 0:
                break  # the gateway exited: its log says why
            time.sleep(0.1)
        _, log = self._shell(container_id, f"tail -n 40 {_LOG}")
        raise ValueError(f"Jupyter gateway server failed to start in {self.container_name}:\n{log}")

    def _shell(self, container_id: str, command: str) -> tuple[int, str]:
        import docker

        try:
            code, out = self._client.containers.get(container_id).exec_run(
                ["/bin/sh", "-c", command], user=self._user
            )
        except docker.errors.DockerException as error:
            return 1, str(error)
        return int(code), out.decode("utf-8", "replace")


def _check_image(client: DockerClient, custom_image: str | None) -> None:
    from ..images import image_status

    if custom_image is not None:
        if find_image(client, custom_image) is None:
            raise ValueError(f"Custom image {custom_image} does not exist")
        return
    if image_status("jupyter", client).chosen is None:
        raise RuntimeError(
            "No Jupyter gateway image: build it with `parley sandbox build --jupyter` (from "
            "Debian's packages when no registry is reachable), or pass custom_image_name=. "
            "`parley sandbox status` shows which images exist."
        )


def _ensure_internal_network(client: DockerClient) -> None:
    """The internal network without inter-container traffic, created on first use.

    Docker before 25 makes a second network of the same name when two processes create it at
    once (``check_duplicate`` is a best effort), and a name two networks share cannot be used
    at all ("network ... is ambiguous"), not even by ID. So this user's processes look and
    create one at a time (a lock file), and duplicates made before are removed while unused."""
    import docker

    with _network_lock():
        named = sorted(
            (
                n
                for n in client.networks.list(names=[INTERNAL_NETWORK])
                if n.name == INTERNAL_NETWORK
            ),
            key=lambda n: str(n.id),
        )  # the engine's name filter matches parts of names too
        for extra in named[1:]:
            with contextlib.suppress(docker.errors.APIError):  # in use: nothing to be done
                extra.remove()
        if named:
            return
        try:
            client.networks.create(
                INTERNAL_NETWORK,
                driver="bridge",
                internal=True,
                check_duplicate=True,
                options={"com.docker.network.bridge.enable_icc": "false"},
                labels={"io.parley.network": "jupyter"},
            )
        except docker.errors.APIError as error:
            if error.status_code != 409:  # created meanwhile (by another user's process)
                raise


@contextlib.contextmanager
def _network_lock() -> Iterator[None]:
    """Held while this user's process looks for and creates the network. Bounded: a file that
    is not this user's, or a lock held too long (a stopped process), only costs the order."""
    path = os.path.join(tempfile.gettempdir(), f"parley-docker-network-{os.getuid()}.lock")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        yield
        return
    try:
        if os.fstat(fd).st_uid == os.getuid():
            deadline = time.monotonic() + _NETWORK_LOCK_SECONDS
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # releases the lock


def _close(sandbox: Sandbox, ending: Ending, own_dir: str | None, client: DockerClient) -> None:
    try:
        sandbox.close(ending)
    finally:
        client.close()
        if own_dir is not None:
            shutil.rmtree(own_dir, ignore_errors=True)
