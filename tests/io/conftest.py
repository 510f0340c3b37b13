from __future__ import annotations

from collections.abc import Iterator

import pytest

from parley.io import IOStream


@pytest.fixture
def restore_global_default() -> Iterator[IOStream]:
    """Tests that replace the global default stream put the previous one back."""
    before = IOStream.get_global_default()
    yield before
    IOStream.set_global_default(before)
