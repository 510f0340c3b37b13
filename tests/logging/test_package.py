"""``parley.logger`` (the package and the stdlib logger), the factory, the base class."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import parley
from parley import runtime_logging
from parley.logger import FileLogger, LoggerFactory, SqliteLogger
from parley.logger.base_logger import BaseLogger

ROOT = Path(__file__).resolve().parents[2]


def test_parley_logger_stays_the_stdlib_logger_in_a_fresh_interpreter() -> None:
    code = (
        "import logging, parley\n"
        "import parley.logger\n"
        "assert parley.logger is logging.getLogger('parley'), type(parley.logger)\n"
        "assert parley.logger.level == logging.INFO\n"
        "import parley.logger as m\n"
        "from parley.logger import SqliteLogger, FileLogger, LoggerFactory\n"
        "assert m.SqliteLogger is SqliteLogger and m.LoggerFactory is LoggerFactory\n"
        "from parley.logger.base_logger import BaseLogger\n"
        "assert m.base_logger.BaseLogger is BaseLogger\n"
        "assert isinstance(parley.runtime_logging, type(logging))\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_logger_attribute_still_logs() -> None:
    import logging

    assert isinstance(parley.logger, logging.Logger)
    assert parley.logger.name == "parley"
    with pytest.raises(AttributeError):
        parley.logger.no_such_thing  # noqa: B018


def test_factory_types(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert isinstance(LoggerFactory.get_logger("sqlite", {"dbname": "x.db"}), SqliteLogger)
    assert isinstance(LoggerFactory.get_logger("file", {}), FileLogger)
    assert LoggerFactory.get_logger().dbname == "logs.db"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="Unknown logger type: csv"):
        LoggerFactory.get_logger("csv")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Unknown logger type"):
        runtime_logging.start(logger_type="csv")  # type: ignore[arg-type]
    assert not runtime_logging.logging_enabled()


def test_base_logger_is_abstract() -> None:
    with pytest.raises(TypeError):
        BaseLogger()  # type: ignore[abstract]
    names = {
        "start",
        "log_chat_completion",
        "log_new_agent",
        "log_event",
        "log_new_wrapper",
        "log_new_client",
        "log_function_use",
        "stop",
        "get_connection",
    }
    assert BaseLogger.__abstractmethods__ == names


def test_hooks_without_a_logger_log_an_error(caplog: pytest.LogCaptureFixture) -> None:
    runtime_logging.autogen_logger = None
    runtime_logging.log_event("x", "e")
    assert runtime_logging.get_connection() is None
    assert "autogen logger is None" in caplog.text
