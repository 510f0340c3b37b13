"""Fixtures of the RetrieveChat tests: the written corpus, and the optional packages they need."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._corpus import write_corpus


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path)
