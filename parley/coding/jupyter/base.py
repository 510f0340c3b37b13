"""How to reach a Jupyter Kernel Gateway (AutoGen's ``autogen.coding.jupyter.base``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["JupyterConnectable", "JupyterConnectionInfo"]


@dataclass
class JupyterConnectionInfo:
    """Where a kernel gateway listens and the token it wants (None: no authentication).

    ``use_https`` makes the client speak HTTPS and secure websockets (``wss``); AutoGen's
    client ignored it for the websocket.
    """

    host: str
    """The host name or IP address (an IPv6 address without brackets)."""
    use_https: bool
    """Whether the gateway speaks HTTPS."""
    port: int | None = None
    """The port; None for the scheme's default."""
    token: str | None = None
    """The gateway's ``auth_token``; None (or empty) when it has none."""


@runtime_checkable
class JupyterConnectable(Protocol):
    """A server a :class:`~parley.coding.jupyter.JupyterCodeExecutor` can connect to.

    Servers parley starts (``LocalJupyterServer``) also have ``stop()``, and may say with a
    ``kernel_root`` attribute (a ``pathlib.Path``) that the gateway runs on this machine and
    resolves kernel paths against that folder: an executor then starts its kernel in its
    ``output_dir``.
    """

    @property
    def connection_info(self) -> JupyterConnectionInfo:
        """Where the gateway listens."""
        ...
