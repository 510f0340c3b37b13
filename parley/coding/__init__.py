"""Code blocks and executors (AutoGen's ``autogen.coding``, spec section 10).

``DockerCommandLineCodeExecutor`` is imported on first access, so that importing this package
does not import the ``docker`` package.
"""

from __future__ import annotations

import importlib
from typing import Any

from .base import CodeBlock, CodeExecutor, CodeExtractor, CodeResult
from .factory import CodeExecutorFactory
from .local_commandline_code_executor import LocalCommandLineCodeExecutor
from .markdown_code_extractor import MarkdownCodeExtractor

__all__ = [
    "CodeBlock",
    "CodeExecutor",
    "CodeExecutorFactory",
    "CodeExtractor",
    "CodeResult",
    "DockerCommandLineCodeExecutor",
    "LocalCommandLineCodeExecutor",
    "MarkdownCodeExtractor",
]


def __getattr__(name: str) -> Any:
    if name == "DockerCommandLineCodeExecutor":
        module = importlib.import_module(".docker_commandline_code_executor", __name__)
        return module.DockerCommandLineCodeExecutor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
