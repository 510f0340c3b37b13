"""AutoGen's runtime loggers (``autogen.logger``): :class:`SqliteLogger`, :class:`FileLogger`
and :class:`LoggerFactory`; the interface is ``parley.logger.base_logger.BaseLogger``.

Turn logging on with :func:`parley.runtime_logging.start`. Reach this package with
``from parley.logger import SqliteLogger`` (or ``import parley.logger as m``): the attribute
``parley.logger`` is the stdlib logger ``"parley"``, as ``autogen.logger`` is AutoGen's
(see ``parley/__init__.py`` for how the two live side by side).
"""

from __future__ import annotations

from .file_logger import FileLogger
from .logger_factory import LoggerFactory
from .sqlite_logger import SqliteLogger

__all__ = ["FileLogger", "LoggerFactory", "SqliteLogger"]
