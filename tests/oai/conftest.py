"""Fixtures of the oai tests."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from parley.oai._profiles import forget_warnings


@pytest.fixture
def tuning(legacy_completion: Path) -> Path:
    """A cache root of the test's own (returned) for Completion and ChatCompletion; what tune
    and set_cache set on the classes is put back afterwards (see ``legacy_completion``)."""
    return legacy_completion


@pytest.fixture
def adaptation_warnings(caplog: pytest.LogCaptureFixture) -> Iterator[Callable[[], list[str]]]:
    """The texts of the request adaptations logged during the test (parley.oai._profiles),
    counted as if none had been logged before: each is logged once per process, and other
    tests in this process may have made the same change already."""
    forget_warnings()
    name = "parley.oai._profiles"
    with caplog.at_level(logging.WARNING, logger=name):
        yield lambda: [r.getMessage() for r in caplog.records if r.name == name]
