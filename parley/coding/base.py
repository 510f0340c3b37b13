"""Code blocks, results and the executor protocols (AutoGen's ``autogen.coding.base``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

from pydantic import BaseModel, Field

__all__ = [
    "CodeBlock",
    "CodeExecutionConfig",
    "CodeExecutor",
    "CodeExtractor",
    "CodeResult",
    "CommandLineCodeResult",
    "IPythonCodeResult",
]


class CodeBlock(BaseModel):
    """A block of code and its language, as found in a message."""

    code: str = Field(description="The code to execute.")
    language: str = Field(description="The language of the code.")


class CodeResult(BaseModel):
    """What running code produced."""

    exit_code: int = Field(description="The exit code of the code execution.")
    output: str = Field(description="The output of the code execution.")


class CommandLineCodeResult(CodeResult):
    """A command-line executor's result; ``code_file`` is the first file written."""

    code_file: str | None = Field(default=None, description="The file the code was written to.")


class IPythonCodeResult(CodeResult):
    """A Jupyter executor's result; ``output_files`` are the images and pages it saved."""

    output_files: list[str] = Field(default_factory=list, description="Files the code produced.")


class CodeExtractor(Protocol):
    """Finds code blocks in a message."""

    def extract_code_blocks(self, message: str | list[Any] | None) -> list[CodeBlock]: ...


@runtime_checkable
class CodeExecutor(Protocol):
    """Runs code blocks. Any object with these members can be given as ``{"executor": obj}``."""

    @property
    def code_extractor(self) -> CodeExtractor: ...

    def execute_code_blocks(self, code_blocks: list[CodeBlock]) -> CodeResult: ...

    def restart(self) -> None: ...


# Functional syntax: two of AutoGen's keys contain hyphens ("jupyter-local" and
# "jupyter-docker" are parley's).
CodeExecutionConfig = TypedDict(
    "CodeExecutionConfig",
    {
        "executor": "Literal['ipython-embedded', 'commandline-local', 'jupyter-local', "
        "'jupyter-docker'] | CodeExecutor",
        "last_n_messages": "int | Literal['auto']",
        "timeout": int,
        "use_docker": "bool | str | list[str]",
        "work_dir": str,
        "ipython-embedded": Mapping[str, Any],
        "commandline-local": Mapping[str, Any],
        "jupyter-local": Mapping[str, Any],
        "jupyter-docker": Mapping[str, Any],
    },
    total=False,
)
