"""Build the code executor a ``code_execution_config`` asks for (AutoGen's ``CodeExecutorFactory``)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, cast

from .base import CodeExecutor

__all__ = ["CodeExecutorFactory"]

_JUPYTER_MODULE = "parley.coding.jupyter"


class CodeExecutorFactory:
    """Turns ``{"executor": ...}`` into a :class:`CodeExecutor`."""

    @staticmethod
    def create(code_execution_config: Mapping[str, Any]) -> CodeExecutor:
        """An executor object is returned as is; ``"commandline-local"`` and
        ``"ipython-embedded"`` build one from the config's entry of the same name."""
        executor = code_execution_config.get("executor")
        if isinstance(executor, CodeExecutor):
            return executor
        if executor == "commandline-local":
            from .local_commandline_code_executor import LocalCommandLineCodeExecutor

            return LocalCommandLineCodeExecutor(
                **code_execution_config.get("commandline-local", {})
            )
        if executor == "ipython-embedded":
            try:
                jupyter = importlib.import_module(_JUPYTER_MODULE)
            except ModuleNotFoundError as error:
                if error.name != _JUPYTER_MODULE:
                    raise  # the module exists but one of its dependencies is missing
                raise NotImplementedError(
                    "The 'ipython-embedded' executor (EmbeddedIPythonCodeExecutor) is not "
                    'available in parley yet; use "executor": "commandline-local" or a '
                    "DockerCommandLineCodeExecutor."
                ) from None
            kwargs = code_execution_config.get("ipython-embedded", {})
            return cast(CodeExecutor, jupyter.EmbeddedIPythonCodeExecutor(**kwargs))
        raise ValueError(f"Unknown code executor {executor}")
