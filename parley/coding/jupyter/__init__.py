"""Code executors over Jupyter kernels (AutoGen's ``autogen.coding.jupyter``).

* :class:`JupyterCodeExecutor` runs code blocks in a kernel of a Jupyter Kernel Gateway:
  :class:`LocalJupyterServer` starts one on this machine, :class:`DockerJupyterServer` one in
  a locked-down container (``parley sandbox build --jupyter`` makes its image); any other gateway is reached by its
  :class:`JupyterConnectionInfo`. :class:`JupyterClient` is the gateway's REST client.
* :class:`EmbeddedIPythonCodeExecutor` runs them in a kernel it starts itself
  (``jupyter_client``), without a gateway.

Both keep variables between blocks and calls (one kernel per executor), save images and HTML
to files named in the output and in ``output_files``, and interrupt a block at its timeout
(the kernel survives). The shared rules and the differences from AutoGen are in the modules'
docstrings: ``_results`` (the block loop, languages, saved files), ``_kernel_messages`` (a
cell's output, timeouts), and each public module.

Every name is imported on first use, so this package imports without the optional
dependencies (``pip install 'parley[jupyter]'``: ``jupyter_client``, ``ipykernel``,
``jupyter_kernel_gateway``, ``websockets``); using a name that needs a missing one raises
``ImportError`` naming that command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

__all__ = [
    "DockerJupyterServer",
    "EmbeddedIPythonCodeExecutor",
    "JupyterClient",
    "JupyterCodeExecutor",
    "JupyterConnectable",
    "JupyterConnectionInfo",
    "LocalJupyterServer",
]

if TYPE_CHECKING:
    from .base import JupyterConnectable, JupyterConnectionInfo
    from .docker_jupyter_server import DockerJupyterServer
    from .embedded_ipython_code_executor import EmbeddedIPythonCodeExecutor
    from .jupyter_client import JupyterClient
    from .jupyter_code_executor import JupyterCodeExecutor
    from .local_jupyter_server import LocalJupyterServer
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "DockerJupyterServer": ".docker_jupyter_server",
            "EmbeddedIPythonCodeExecutor": ".embedded_ipython_code_executor",
            "JupyterClient": ".jupyter_client",
            "JupyterCodeExecutor": ".jupyter_code_executor",
            "JupyterConnectable": ".base",
            "JupyterConnectionInfo": ".base",
            "LocalJupyterServer": ".local_jupyter_server",
        },
        submodules=(
            "base",
            "docker_jupyter_server",
            "embedded_ipython_code_executor",
            "jupyter_client",
            "jupyter_code_executor",
            "local_jupyter_server",
        ),
    )
