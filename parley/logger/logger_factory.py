"""``LoggerFactory``: a runtime logger by type name (AutoGen's)."""

from __future__ import annotations

from typing import Any, Literal

from .base_logger import BaseLogger
from .file_logger import FileLogger
from .sqlite_logger import SqliteLogger

__all__ = ["LoggerFactory"]


class LoggerFactory:
    """Makes the logger ``runtime_logging.start`` uses when not given one."""

    @staticmethod
    def get_logger(
        logger_type: Literal["sqlite", "file"] = "sqlite", config: dict[str, Any] | None = None
    ) -> BaseLogger:
        """A :class:`SqliteLogger` or a :class:`FileLogger` (configured by ``config``);
        any other type is a ``ValueError``."""
        config = {} if config is None else config
        if logger_type == "sqlite":
            return SqliteLogger(config)
        if logger_type == "file":
            return FileLogger(config)
        raise ValueError(f"[logger_factory] Unknown logger type: {logger_type}")
