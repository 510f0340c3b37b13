"""scripts/check_import_cycles.py finds every import cycle, on real packages written to disk."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("grimp")

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "check_import_cycles.py"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_import_cycles", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _package(root: Path, name: str, files: dict[str, str]) -> None:
    for relative, source in {"__init__.py": "", **files}.items():
        path = root / name / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))


def _check(root: Path, package: str) -> subprocess.CompletedProcess[str]:
    # The script's own interpreter, finding the package on PYTHONPATH as a user's would.
    path = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, str(SCRIPT), package],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        timeout=120,
        check=False,
    )


def test_cycles_through_function_level_imports_and_init_are_reported(tmp_path: Path) -> None:
    _package(
        tmp_path,
        "cyclic_pkg",
        {
            "a.py": "from . import b\n",
            # Runs on first call, so it counts.
            "b.py": "def later():\n    from . import a\n",
            # Only for type checkers: never runs, so c <-> d is no cycle.
            "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import d\n",
            "d.py": "from . import c\n",
            # A package __init__ is a module like any other.
            "sub/__init__.py": "from .x import X\nLIMIT = 3\n",
            "sub/x.py": "X = 1\ndef f():\n    from cyclic_pkg.sub import LIMIT\n",
        },
    )
    result = _check(tmp_path, "cyclic_pkg")
    assert result.returncode == 1, result.stderr
    assert "2 import cycle(s) among the modules of cyclic_pkg" in result.stdout
    assert "2 modules: cyclic_pkg.a, cyclic_pkg.b" in result.stdout
    assert "cyclic_pkg.b -> cyclic_pkg.a  (line 2)" in result.stdout
    assert "2 modules: cyclic_pkg.sub, cyclic_pkg.sub.x" in result.stdout
    assert "cyclic_pkg.c" not in result.stdout


def test_an_acyclic_package_passes(tmp_path: Path) -> None:
    _package(tmp_path, "acyclic_pkg", {"a.py": "from . import b\n", "b.py": "import json\n"})
    result = _check(tmp_path, "acyclic_pkg")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no import cycles among the 3 modules of acyclic_pkg" in result.stdout


def test_strongly_connected_components() -> None:
    scc = _load_script().strongly_connected
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert scc(graph) == [["a", "b", "c"], ["d", "e"]]
    assert scc({"a": {"b"}, "b": set()}) == []
    # A chain longer than the recursion limit is no problem.
    chain = {str(i): {str(i + 1)} for i in range(5000)} | {"5000": {"0"}}
    assert len(scc(chain)[0]) == 5001


def test_no_cycle_involves_the_package_init_types_io_cache_local_or_function_utils() -> None:
    # The whole package must end up acyclic (scripts/test.sh runs the check on it); these
    # parts already are.
    import grimp

    graph = grimp.build_graph("parley", exclude_type_checking_imports=True, cache_dir=None)
    cycles = _load_script().strongly_connected(
        {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    )
    packages = ("parley.io", "parley.cache", "parley.local")
    modules = {"parley", "parley.cli", "parley.types", "parley._lazy", "parley._signatures"}
    modules |= {"parley.function_utils", "parley._tool_arguments"}
    for component in cycles:
        assert not [m for m in component if m in modules or m.startswith(packages)], component
