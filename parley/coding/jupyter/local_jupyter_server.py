"""A Jupyter Kernel Gateway on this machine (AutoGen's ``autogen.coding.jupyter.local_jupyter_server``).

``LocalJupyterServer()`` starts ``python -m kernel_gateway`` (the ``jupyter_kernel_gateway``
package, part of ``pip install 'parley[jupyter]'``) and waits until it answers; hand it to a
:class:`~parley.coding.jupyter.JupyterCodeExecutor`. Same constructor as AutoGen; the
differences:

* Startup is bounded (``startup_timeout``, parley only; AutoGen waited for ever): a gateway that
  does not answer in time, or exits, raises ``ValueError`` with its output. Readiness is a
  real request to the gateway, not a log line (AutoGen hung when ``log_level`` hid that line).
* ``token=None`` means no authentication (AutoGen passed ``None`` on the command line and
  failed). A gateway on an address other than loopback without a token is refused: anyone who
  can reach it could run code. The token is kept from everyone else, the code in the gateway's
  kernels included (it could drive the gateway with it: start kernels, run code in other
  executors' kernels): it is not on the gateway's command line (which every local user can
  read) nor in its environment (which its kernels inherit), but in a config file readable only
  by this user, in a private folder (also where the gateway keeps its cookie secret) outside
  the Jupyter runtime folder the kernels know of, and that folder is removed as soon as the
  gateway answers; the gateway makes itself non-dumpable as it starts, so a kernel, running as
  the same user without ``CAP_SYS_PTRACE``, cannot read its memory or environment through
  ``/proc`` either.
* ``port=None`` takes a free port (AutoGen let the gateway choose, from 8888 up).
* The gateway, its kernels and everything code in them starts run under parley's process
  supervisor (``_gateway_process``): :meth:`LocalJupyterServer.stop` ends all of them, no
  orphan kernel is left, and they also end at interpreter exit (``atexit``, as AutoGen) and
  when parley dies.
* The gateway, and so each kernel and the code it runs, gets parley's minimal environment
  (``parley.coding._process.safe_env``): API keys and other secrets of this process are not
  visible to executed code. Its Jupyter runtime files (kernel connection files, and the Unix
  sockets the kernels listen on: no TCP ports) live in a private temporary folder, removed at
  stop.
* The gateway runs in ``/`` and resolves kernel paths against it (``kernel_root``), so an
  executor starts its kernel in its own ``output_dir``.
* HTTPS (parley only): ``certfile`` and ``keyfile`` make the gateway speak HTTPS, and clients
  ``https``/``wss``.
* ``log_file=None`` (parley only) writes no log file; a relative ``log_file`` is relative to
  the current directory at construction.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import ipaddress
import json
import os
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..._core.lifetime import StopsOnExit
from ...exceptions import JupyterGatewayError
from .._process import safe_env, while_code_runs
from ._gateway_process import GatewayProcess
from ._socket_folder import private_socket_folder
from .base import JupyterConnectionInfo
from .jupyter_client import INSTALL_HINT, JupyterClient

__all__ = ["LocalJupyterServer"]


_POLL_SECONDS = 0.1
_PORT_ATTEMPTS = 3  # a free port can be taken between choosing it and the gateway binding it
_WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}
# What the runtime folder holds: per kernel "/kernel-<uuid>.json" and "/kernel-<uuid>-ipc-N".
_KERNEL_NAMES_ROOM = 52
# `python -m kernel_gateway`, made non-dumpable first (prctl PR_SET_DUMPABLE 0, Linux): its
# memory holds the token, and its kernels (which exec, so are dumpable again) must not read it.
_LAUNCH = (
    "import ctypes, runpy\n"
    "try:\n"
    "    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n"
    "except (OSError, AttributeError):\n"
    "    pass\n"
    "runpy.run_module('kernel_gateway', run_name='__main__', alter_sys=True)\n"
)


def _free_port(ip: str) -> int:
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((ip, 0))
        return int(probe.getsockname()[1])


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a module set to None
        return False


def _is_loopback(ip: str) -> bool:
    try:
        return ip == "localhost" or ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


class LocalJupyterServer(StopsOnExit):
    """A kernel gateway process on this machine; a :class:`JupyterConnectable`, and a context
    manager that stops it."""

    class GenerateToken:
        """The default ``token``: a new random token (``secrets.token_hex(32)``)."""

    kernel_root = Path("/")
    """The folder the gateway resolves kernel paths against (see ``JupyterConnectable``)."""

    def __init__(
        self,
        ip: str = "127.0.0.1",
        port: int | None = None,
        token: str | GenerateToken | None = GenerateToken(),  # noqa: B008 - AutoGen's marker
        log_file: str | None = "jupyter_gateway.log",
        log_level: str = "INFO",
        log_max_bytes: int = 1048576,
        log_backup_count: int = 3,
        *,
        startup_timeout: float = 60.0,
        certfile: str | None = None,
        keyfile: str | None = None,
    ) -> None:
        """Start the gateway; return once it answers (see the module docs)."""
        if sys.platform == "win32":
            raise ValueError(
                "LocalJupyterServer is not supported on Windows (a kernel gateway bug)."
            )
        if not _installed("kernel_gateway"):
            raise ImportError(
                f"LocalJupyterServer needs the jupyter_kernel_gateway package: {INSTALL_HINT}",
                name="kernel_gateway",
            )
        if isinstance(token, LocalJupyterServer.GenerateToken):
            token = secrets.token_hex(32)
        if not token and not _is_loopback(ip):
            raise ValueError(
                f"A Jupyter gateway on {ip!r} without a token would let anyone who can reach it "
                "run code on this machine; give a token, or use ip='127.0.0.1'."
            )
        self.ip = ip
        self.token: str | None = token or None
        self._https = certfile is not None
        self._stopped = False
        self._stop_lock = threading.Lock()  # stop() may come from atexit and a thread at once
        self._runtime_dir = private_socket_folder("parley-jupyter-", _KERNEL_NAMES_ROOM)
        self._private_dir = tempfile.mkdtemp(prefix="parley-gateway-")  # gone once it serves
        self._code_running = contextlib.ExitStack()
        try:
            self._code_running.enter_context(while_code_runs())
            self._process, self.port = self._start(
                port,
                startup_timeout,
                self._settings(log_file, log_level, log_max_bytes, log_backup_count),
                {"certfile": certfile, "keyfile": keyfile},
            )
        except BaseException:
            self._cleanup()
            raise
        atexit.register(self.stop)

    @property
    def connection_info(self) -> JupyterConnectionInfo:
        """Where the gateway listens (a wildcard ``ip`` is reached on loopback)."""
        host = _WILDCARDS.get(self.ip, self.ip)
        return JupyterConnectionInfo(
            host=host, use_https=self._https, port=self.port, token=self.token
        )

    def get_client(self) -> JupyterClient:
        """A REST client of this gateway."""
        return JupyterClient(self.connection_info)

    def stop(self) -> None:
        """Stop the gateway, its kernels and everything they started; safe to call twice."""
        with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
        atexit.unregister(self.stop)
        try:
            self._process.stop()
        finally:
            self._cleanup()

    # -- starting -------------------------------------------------------------------------------

    def _settings(
        self, log_file: str | None, log_level: str, max_bytes: int, backups: int
    ) -> dict[str, Any]:
        """The gateway's config file, less the port and TLS files."""
        logging: dict[str, Any] = {
            "loggers": {"KernelGatewayApp": {"level": log_level, "handlers": ["console"]}}
        }
        if log_file is not None:
            logging["handlers"] = {
                "file": {
                    "class": "logging.handlers.RotatingFileHandler",
                    "level": log_level,
                    "maxBytes": max_bytes,
                    "backupCount": backups,
                    "filename": os.path.abspath(log_file),
                }
            }
            logging["loggers"]["KernelGatewayApp"]["handlers"].append("file")
        return {
            "JupyterApp": {"answer_yes": True},
            "KernelGatewayApp": {
                "ip": self.ip,
                "port_retries": 0,
                "auth_token": self.token or "",
                "logging_config": logging,
            },
            "JupyterWebsocketPersonality": {"list_kernels": True},
            # Unix sockets beside each kernel's connection file, in the private runtime folder
            # (see _socket_folder).
            "KernelManager": {"transport": "ipc"},
        }

    def _start(
        self,
        port: int | None,
        timeout: float,
        settings: dict[str, Any],
        tls: dict[str, str | None],
    ) -> tuple[GatewayProcess, int]:
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            chosen = port if port is not None else _free_port(self.ip)
            app = settings["KernelGatewayApp"] | {"port": chosen}
            app.update({key: os.path.abspath(value) for key, value in tls.items() if value})
            app["cookie_secret_file"] = os.path.join(self._private_dir, "cookie_secret")
            config = Path(self._private_dir, "gateway_config.json")
            with os.fdopen(
                os.open(config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w"
            ) as file:
                file.write(json.dumps(settings | {"KernelGatewayApp": app}))
            process = GatewayProcess(
                sys.executable,
                [sys.executable, "-c", _LAUNCH, f"--config={config}"],
                str(self.kernel_root),
                safe_env({"JUPYTER_RUNTIME_DIR": self._runtime_dir}),
            )
            try:
                serving = self._wait_until_serving(process, chosen, timeout)
            except BaseException:
                process.stop()
                raise
            if serving:
                # It has read its config and cookie secret: no file holds the token any more.
                shutil.rmtree(self._private_dir, ignore_errors=True)
                return process, chosen
            code = process.exit_code()
            process.stop()
            output = process.output()
            taken = "already in use" in output or "no available port" in output
            if port is not None or attempt == _PORT_ATTEMPTS or not taken:
                what = (
                    f"exited with code {code}"
                    if code is not None
                    else f"did not answer within {timeout:g} s"
                )
                raise ValueError(
                    f"Jupyter gateway server failed to start: it {what}. Its output:\n"
                    f"{output or '(none)'}"
                )
        raise AssertionError("unreachable")  # pragma: no cover

    def _wait_until_serving(self, process: GatewayProcess, port: int, timeout: float) -> bool:
        """Whether the gateway answered an authenticated request before it exited or timed out."""
        host = _WILDCARDS.get(self.ip, self.ip)
        client = JupyterClient(
            JupyterConnectionInfo(host=host, use_https=self._https, port=port, token=self.token)
        )
        deadline = time.monotonic() + timeout
        while process.running() and time.monotonic() < deadline:
            try:
                with socket.create_connection((host, port), timeout=_POLL_SECONDS):
                    pass
                client.list_kernel_specs()
                return process.running()  # not another program that had the port
            except (OSError, JupyterGatewayError):
                time.sleep(_POLL_SECONDS)
        return False

    def _cleanup(self) -> None:
        self._code_running.close()
        shutil.rmtree(self._runtime_dir, ignore_errors=True)
        shutil.rmtree(self._private_dir, ignore_errors=True)
