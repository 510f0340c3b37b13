"""Fixtures of the oai tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def tuning(legacy_completion: Path) -> Path:
    """A cache root of the test's own (returned) for Completion and ChatCompletion; what tune
    and set_cache set on the classes is put back afterwards (see ``legacy_completion``)."""
    return legacy_completion
