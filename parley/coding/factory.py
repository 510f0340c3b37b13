"""Build the code executor a ``code_execution_config`` asks for (AutoGen's ``CodeExecutorFactory``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import CodeExecutor

__all__ = ["CodeExecutorFactory"]


class CodeExecutorFactory:
    """Turns ``{"executor": ...}`` into a :class:`CodeExecutor`."""

    @staticmethod
    def create(code_execution_config: Mapping[str, Any]) -> CodeExecutor:
        """The executor ``code_execution_config["executor"]`` names:

        * an executor object (anything with the :class:`CodeExecutor` members): itself;
        * ``"commandline-local"``: ``LocalCommandLineCodeExecutor(**config["commandline-local"])``;
        * ``"ipython-embedded"``: ``EmbeddedIPythonCodeExecutor(**config["ipython-embedded"])``;
        * ``"jupyter-local"`` (parley only): a ``JupyterCodeExecutor`` over a
          ``LocalJupyterServer`` that the executor owns: its ``stop()`` (or leaving its ``with``
          block) stops the server too. ``config["jupyter-local"]`` holds the executor's
          keyword arguments (``kernel_name``, ``timeout``, ``output_dir``) and, under
          ``"server"``, the server's (``ip``, ``port``, ``token``, ``log_file``...)::

              {"executor": "jupyter-local",
               "jupyter-local": {"timeout": 30, "output_dir": "out",
                                 "server": {"log_file": None}}}

        * ``"jupyter-docker"`` (parley only): the same over a ``DockerJupyterServer`` (the
          gateway in a locked-down container; ``"server"`` holds its arguments, e.g.
          ``custom_image_name``, ``work_dir``, ``network``).

        A missing entry means the defaults. Anything else raises
        ``ValueError("Unknown code executor ...")``. The Jupyter executors need
        ``pip install 'parley[jupyter]'``.
        """
        executor = code_execution_config.get("executor")
        if isinstance(executor, CodeExecutor):
            return executor
        if executor == "commandline-local":
            from .local_commandline_code_executor import LocalCommandLineCodeExecutor

            return LocalCommandLineCodeExecutor(
                **code_execution_config.get("commandline-local", {})
            )
        if executor == "ipython-embedded":
            from .jupyter.embedded_ipython_code_executor import EmbeddedIPythonCodeExecutor

            return EmbeddedIPythonCodeExecutor(**code_execution_config.get("ipython-embedded", {}))
        if executor in ("jupyter-local", "jupyter-docker"):
            return _jupyter_over_server(executor, code_execution_config.get(executor, {}))
        raise ValueError(f"Unknown code executor {executor}")


def _jupyter_over_server(name: str, options: Mapping[str, Any]) -> CodeExecutor:
    """A JupyterCodeExecutor that owns the server it runs on (stopped with it)."""
    from .jupyter.jupyter_code_executor import JupyterCodeExecutor

    kwargs = {key: value for key, value in options.items() if key != "server"}
    server: Any
    if name == "jupyter-local":
        from .jupyter.local_jupyter_server import LocalJupyterServer

        server = LocalJupyterServer(**options.get("server", {}))
    else:
        from .jupyter.docker_jupyter_server import DockerJupyterServer

        server = DockerJupyterServer(**options.get("server", {}))
    try:
        return JupyterCodeExecutor(server, owned_server=True, **kwargs)
    except BaseException:
        server.stop()
        raise
