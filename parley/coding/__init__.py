"""Code blocks and executors (AutoGen's ``autogen.coding``).

Every name is imported on first access: importing this package costs nothing, so that
``parley.code_utils`` (and with it ``import parley``) can use its light vocabulary module
(``_blocks``) without loading pydantic, the process supervisor or the ``docker`` package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# DockerCommandLineCodeExecutor stays out of this list: it has always been typed Any here (code
# such as parley.cli assigns either executor to one variable), and typing it would break that.
if TYPE_CHECKING:
    from .base import CodeBlock, CodeExecutor, CodeExtractor, CodeResult
    from .factory import CodeExecutorFactory
    from .func_with_reqs import (
        Alias,
        FunctionWithRequirements,
        FunctionWithRequirementsStr,
        ImportFromModule,
        with_requirements,
    )
    from .local_commandline_code_executor import LocalCommandLineCodeExecutor
    from .markdown_code_extractor import MarkdownCodeExtractor

__all__ = [
    "Alias",
    "CodeBlock",
    "CodeExecutor",
    "CodeExecutorFactory",
    "CodeExtractor",
    "CodeResult",
    "DockerCommandLineCodeExecutor",
    "FunctionWithRequirements",
    "FunctionWithRequirementsStr",
    "ImportFromModule",
    "LocalCommandLineCodeExecutor",
    "MarkdownCodeExtractor",
    "with_requirements",
]

_HOMES = {
    "CodeBlock": "base",
    "CodeExecutor": "base",
    "CodeExtractor": "base",
    "CodeResult": "base",
    "CodeExecutorFactory": "factory",
    "DockerCommandLineCodeExecutor": "docker_commandline_code_executor",
    "LocalCommandLineCodeExecutor": "local_commandline_code_executor",
    "MarkdownCodeExtractor": "markdown_code_extractor",
    # AutoGen has these in autogen.coding.func_with_reqs only; here they are in both places.
    "Alias": "func_with_reqs",
    "FunctionWithRequirements": "func_with_reqs",
    "FunctionWithRequirementsStr": "func_with_reqs",
    "ImportFromModule": "func_with_reqs",
    "with_requirements": "func_with_reqs",
}
# ``jupyter`` (the Jupyter executors) is a subpackage of its own, with optional dependencies:
# reachable as an attribute, imported on first access like the rest.
_SUBMODULES = frozenset({*_HOMES.values(), "jupyter"})


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:  # ``import parley.coding`` then ``parley.coding.base.CodeBlock``
        return importlib.import_module(f".{name}", __name__)
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_SUBMODULES})
