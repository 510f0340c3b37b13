"""The tracing extra: a clear error without it, and nothing of it loaded by ``import parley``."""

from __future__ import annotations

import subprocess
import sys

import pytest

import parley.tracing


def test_without_opentelemetry_enable_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # what an absent package looks like
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'parley\[tracing\]'") as caught:
        parley.tracing.enable()
    assert caught.value.name == "opentelemetry"
    assert not parley.tracing.tracing_enabled()


def test_import_parley_loads_no_opentelemetry() -> None:
    code = (
        "import sys, parley, parley.tracing; "
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"
