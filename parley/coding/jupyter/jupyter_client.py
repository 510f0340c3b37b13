"""A client of a Jupyter Kernel Gateway (AutoGen's ``autogen.coding.jupyter.jupyter_client``).

:class:`JupyterClient` speaks the gateway's REST API (kernel specs, start, list, interrupt,
restart and delete kernels); :class:`JupyterKernelClient` runs code in one kernel over the
gateway's websocket (``/api/kernels/<id>/channels``). The differences from AutoGen:

* HTTPS is honoured for the websocket too (``wss://``; AutoGen always used ``ws://``), with
  the system's certificate authorities (``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` are read).
* The REST calls use the standard library (``urllib``), not ``requests``: six JSON calls need
  no dependency. A refused connection is retried 5 times (0.1 s backoff, doubling), as AutoGen's
  session did; an error answer raises :class:`~parley.exceptions.JupyterGatewayError` (an
  ``OSError``, as ``requests``' errors are) with the status and the gateway's message. A
  gateway on a loopback address is reached directly, never through a proxy of the environment.
* :meth:`JupyterClient.interrupt_kernel` (parley's): a kernel that runs too long is interrupted
  (the kernel keeps its variables), and :meth:`JupyterClient.get_kernel_client` hands it to the
  kernel client, whose :meth:`~JupyterKernelClient.execute` interrupts the kernel at its
  timeout. The timeout is the cell's whole running time, not AutoGen's longest silence.
* Only the messages answering a request are read as its output (parent message id); the output
  rules are ``_kernel_messages``' (errors without terminal colour codes, output printed before
  an error kept).

The websocket needs the ``websockets`` package (>= 15), part of ``pip install 'parley[jupyter]'``.
"""

from __future__ import annotations

import contextlib
import importlib
import ipaddress
import json
import ssl
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Mapping
from typing import Any, cast

from ..._core.lifetime import StopsOnExit
from ...exceptions import JupyterGatewayError
from ._kernel_messages import ExecutionResult as _ExecutionResult
from ._kernel_messages import new_message, run_cell, wait_until_ready
from .base import JupyterConnectionInfo

__all__ = ["JupyterClient", "JupyterKernelClient"]


_RETRIES = 5
_BACKOFF_SECONDS = 0.1
_REQUEST_TIMEOUT = 60.0  # a kernel start waits for the kernel process; generous, but bounded
_OPEN_TIMEOUT = 30.0
_MAX_MESSAGE_BYTES = 128 * 1024 * 1024  # an image display is one message; the default is 1 MiB
INSTALL_HINT = "pip install 'parley[jupyter]'"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"The Jupyter executors need the optional package {module.split('.')[0]!r}: "
            f"{INSTALL_HINT}",
            name=error.name,
        ) from error


def _error_detail(body: bytes) -> str:
    """The gateway's explanation in an error answer: its message, and the last line of its
    traceback (where the real cause is: ``NoSuchKernel: ...``) rather than all of it."""
    text = body.decode("utf-8", "replace").strip()
    try:
        answer = json.loads(text)
    except ValueError:
        return text or "(no message)"
    if not isinstance(answer, dict):
        return text
    parts = [str(answer.get("message") or answer.get("reason") or "").strip()]
    traceback = str(answer.get("traceback") or "").strip()
    if traceback:
        parts.append(traceback.splitlines()[-1])
    return " - ".join(part for part in parts if part) or "(no message)"


class JupyterClient:
    """The REST API of the kernel gateway ``connection_info`` names."""

    def __init__(self, connection_info: JupyterConnectionInfo) -> None:
        self._connection_info = connection_info
        host = connection_info.host
        netloc = f"[{host}]" if ":" in host else host
        if connection_info.port is not None:
            netloc += f":{connection_info.port}"
        secure = connection_info.use_https
        self._base_url = f"{'https' if secure else 'http'}://{netloc}"
        self._ws_url = f"{'wss' if secure else 'ws'}://{netloc}"
        self._ssl = ssl.create_default_context() if secure else None
        self._direct = _is_loopback(host)
        handlers: list[urllib.request.BaseHandler] = []
        if self._ssl is not None:
            handlers.append(urllib.request.HTTPSHandler(context=self._ssl))
        if self._direct:
            handlers.append(urllib.request.ProxyHandler({}))
        self._opener = urllib.request.build_opener(*handlers)

    @property
    def connection_info(self) -> JupyterConnectionInfo:
        """The gateway this client talks to."""
        return self._connection_info

    def _headers(self) -> dict[str, str]:
        token = self._connection_info.token
        return {"Authorization": f"token {token}"} if token else {}

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """Send one request; the decoded JSON answer (None when it has no body)."""
        data = None if body is None else json.dumps(body).encode()
        headers = {**self._headers(), "Content-Type": "application/json"}
        request = urllib.request.Request(
            self._base_url + path, data=data, headers=headers, method=method
        )
        for attempt in range(_RETRIES + 1):
            try:
                with self._opener.open(request, timeout=_REQUEST_TIMEOUT) as response:
                    payload = response.read()
                return json.loads(payload) if payload.strip() else None
            except urllib.error.HTTPError as error:
                with error:
                    detail = _error_detail(error.read())
                raise JupyterGatewayError(
                    f"The Jupyter gateway at {self._base_url} answered {method} {path} with "
                    f"{error.code} {error.reason}: {detail}",
                    status=error.code,
                ) from None
            except OSError as error:  # URLError, or a reset or timeout while reading
                reason = getattr(error, "reason", error)
                if isinstance(reason, ConnectionRefusedError) and attempt < _RETRIES:
                    time.sleep(_BACKOFF_SECONDS * 2**attempt)
                    continue
                raise JupyterGatewayError(
                    f"The Jupyter gateway at {self._base_url} could not be reached "
                    f"({method} {path}): {reason}. Is it running?"
                ) from error
        raise AssertionError("unreachable")  # pragma: no cover

    def list_kernel_specs(self) -> dict[str, Any]:
        """``GET /api/kernelspecs``: ``{"default": name, "kernelspecs": {name: {...}}}``."""
        return cast("dict[str, Any]", self._request("GET", "/api/kernelspecs"))

    def list_kernels(self) -> list[dict[str, Any]]:
        """``GET /api/kernels``: one dict (``id``, ``name``, ``execution_state``...) per kernel."""
        return cast("list[dict[str, Any]]", self._request("GET", "/api/kernels"))

    def start_kernel(self, kernel_spec_name: str, *, path: str | None = None) -> str:
        """Start a kernel of the named spec; its id. ``path`` (parley only): the folder the
        kernel starts in, relative to the gateway's root folder."""
        body: dict[str, Any] = {"name": kernel_spec_name}
        if path is not None:
            body["path"] = path
        return str(self._request("POST", "/api/kernels", body)["id"])

    def delete_kernel(self, kernel_id: str) -> None:
        """Shut the kernel down."""
        self._request("DELETE", f"/api/kernels/{kernel_id}")

    def restart_kernel(self, kernel_id: str) -> None:
        """Restart the kernel (its variables are lost; same id)."""
        self._request("POST", f"/api/kernels/{kernel_id}/restart")

    def interrupt_kernel(self, kernel_id: str) -> None:
        """Interrupt what the kernel runs (parley only): ``KeyboardInterrupt`` in Python."""
        self._request("POST", f"/api/kernels/{kernel_id}/interrupt")

    def get_kernel_client(self, kernel_id: str) -> JupyterKernelClient:
        """Open the kernel's websocket; the client interrupts the kernel at its timeouts."""
        connect = _import("websockets.sync.client").connect
        try:
            # Entered as a context manager (websockets >= 17.1 warns otherwise), closed by the
            # kernel client's stop().
            with contextlib.ExitStack() as opened:
                websocket = opened.enter_context(
                    connect(
                        f"{self._ws_url}/api/kernels/{kernel_id}/channels",
                        additional_headers=self._headers(),
                        ssl=self._ssl,
                        open_timeout=_OPEN_TIMEOUT,
                        max_size=_MAX_MESSAGE_BYTES,
                        **({"proxy": None} if self._direct else {}),
                    )
                )
                opened.pop_all()
        except (OSError, TimeoutError) as error:
            raise JupyterGatewayError(
                f"Could not open the websocket of kernel {kernel_id} at {self._ws_url}: {error}"
            ) from error
        except Exception as error:  # websockets' InvalidStatus, InvalidHandshake...
            raise JupyterGatewayError(
                f"The Jupyter gateway at {self._ws_url} refused the websocket of kernel "
                f"{kernel_id}: {error}"
            ) from error
        return JupyterKernelClient(websocket, interrupt=lambda: self.interrupt_kernel(kernel_id))


class JupyterKernelClient(StopsOnExit):
    """One kernel's websocket: run code (:meth:`execute`), check it is up
    (:meth:`wait_for_ready`). A context manager that closes the socket."""

    ExecutionResult = _ExecutionResult
    """A cell's result (AutoGen's nested name; ``ExecutionResult.DataItem`` is an image or page)."""

    def __init__(self, websocket: Any, *, interrupt: Callable[[], None] | None = None) -> None:
        """``websocket``: a ``websockets.sync`` connection to ``/api/kernels/<id>/channels``;
        ``interrupt`` (parley only): interrupts the kernel (without it a timed-out cell is
        left running)."""
        self._websocket = websocket
        self._interrupt = interrupt
        self._session_id = uuid.uuid4().hex
        self._closed = _import("websockets.exceptions").ConnectionClosed

    def stop(self) -> None:
        """Close the websocket (the kernel keeps running)."""
        self._websocket.close()

    def wait_for_ready(self, timeout_seconds: float | None = None) -> bool:
        """Whether the kernel answers a ``kernel_info_request`` within the timeout."""
        return wait_until_ready(self, timeout_seconds)

    def execute(self, code: str, timeout_seconds: float | None = None) -> _ExecutionResult:
        """Run ``code`` as one cell; at ``timeout_seconds`` the kernel is interrupted."""
        return run_cell(self, code, timeout_seconds).result

    # -- _kernel_messages.KernelChannels ----------------------------------------------------------

    def send(self, msg_type: str, content: Mapping[str, Any]) -> str:
        message = new_message(msg_type, content, self._session_id)
        try:
            self._websocket.send(json.dumps(message))
        except self._closed as error:
            raise self._gone(error) from error
        return str(message["header"]["msg_id"])

    def receive(self, timeout: float) -> Mapping[str, Any] | None:
        try:
            frame = self._websocket.recv(timeout=timeout)
        except TimeoutError:
            return None
        except self._closed as error:
            raise self._gone(error) from error
        if isinstance(frame, bytes):
            return {}  # a message with binary buffers (widgets' comms): not a cell's output
        return cast("Mapping[str, Any]", json.loads(frame))

    def interrupt(self) -> None:
        if self._interrupt is not None:
            self._interrupt()

    def alive(self) -> bool:
        return True  # the gateway reports a dead kernel by a status message (restarting/dead)

    @staticmethod
    def _gone(error: BaseException) -> JupyterGatewayError:
        return JupyterGatewayError(
            f"The connection to the kernel closed ({error}): the kernel was shut down or the "
            "Jupyter gateway stopped."
        )
