"""What the command-line executors share: settings, the extractor, the context manager."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import TypeVar

from .markdown_code_extractor import MarkdownCodeExtractor

__all__ = ["CommandLineExecutorBase"]

_SelfT = TypeVar("_SelfT", bound="CommandLineExecutorBase")


class CommandLineExecutorBase:
    """Base of the local and Docker executors; a context manager that calls :meth:`stop`."""

    _timeout: int
    _work_dir: Path

    @property
    def timeout(self) -> int:
        """Seconds each block may run."""
        return self._timeout

    @property
    def work_dir(self) -> Path:
        """Where code files are written."""
        return self._work_dir

    @property
    def code_extractor(self) -> MarkdownCodeExtractor:
        """Finds the fenced code blocks of a message."""
        return MarkdownCodeExtractor()

    def stop(self) -> None:
        """Release what the executor holds (nothing, by default)."""

    def __enter__(self: _SelfT) -> _SelfT:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        self.stop()
