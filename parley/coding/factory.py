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
        if executor == "jupyter-local":
            return _jupyter_local(code_execution_config.get("jupyter-local", {}))
        raise ValueError(f"Unknown code executor {executor}")


def _jupyter_local(options: Mapping[str, Any]) -> CodeExecutor:
    from .jupyter.jupyter_code_executor import JupyterCodeExecutor
    from .jupyter.local_jupyter_server import LocalJupyterServer

    kwargs = {key: value for key, value in options.items() if key != "server"}
    server = LocalJupyterServer(**options.get("server", {}))
    try:
        return JupyterCodeExecutor(server, owned_server=True, **kwargs)
    except BaseException:
        server.stop()
        raise
