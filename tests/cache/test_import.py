from __future__ import annotations

import subprocess
import sys

import parley.cache


def test_importing_parley_cache_does_not_import_backend_libraries() -> None:
    code = (
        "import sys, parley.cache; "
        "print(sorted(m for m in ('diskcache', 'redis') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_public_names() -> None:
    assert set(parley.cache.__all__) >= {"Cache", "AbstractCache"}
    for name in parley.cache.__all__:
        assert getattr(parley.cache, name).__name__ == name
