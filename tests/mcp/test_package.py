"""``parley.mcp`` is optional: ``import parley`` and the ``parley`` command never load the MCP
SDK, and without it ``parley.mcp`` and ``parley mcp serve`` say which extra to install.

Each check runs in a fresh interpreter; the SDK is made missing there by ``sys.modules`` entries
of None for its packages, which make every import of them (and of their sub-modules) fail as an
absent package's would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ._support import ROOT, WAIT

HINT = "pip install 'parley[mcp]'"
WITHOUT_SDK = "import sys\nsys.modules['mcp'] = None\nsys.modules['mcp_types'] = None\n"


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def test_parley_and_its_command_do_not_load_the_sdk() -> None:
    done = _fresh(
        "import json, sys, parley, parley.cli\n"
        "print(json.dumps([m for m in sys.modules if m.split('.')[0] in "
        "('mcp', 'mcp_types') or m.startswith('parley.mcp')]))"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_without_the_sdk_importing_parley_mcp_names_the_extra() -> None:
    done = _fresh(WITHOUT_SDK + "import parley.mcp")
    assert done.returncode == 1
    assert "ImportError: parley.mcp needs the MCP SDK (the 'mcp' package)" in done.stderr
    assert HINT in done.stderr


def test_without_the_sdk_connect_names_the_extra() -> None:
    done = _fresh(
        WITHOUT_SDK + "try:\n"
        "    from parley.mcp import connect\n"
        "except ImportError as e:\n"
        "    print(type(e).__name__, e.name, '|', e)\n"
    )
    assert done.returncode == 0, done.stderr
    first, _, message = done.stdout.partition(" | ")
    assert first == "ImportError mcp"  # the missing package, for code that checks e.name
    assert message.strip().endswith(HINT)


def test_without_the_sdk_parley_mcp_serve_names_the_extra() -> None:
    done = _fresh(
        WITHOUT_SDK + "from parley.cli import main\n"
        "raise SystemExit(main(['mcp', 'serve', 'tests/mcp/team.py:calculator']))\n"
    )
    assert done.returncode == 1
    assert done.stderr.startswith("parley mcp serve: parley.mcp needs the MCP SDK")
    assert HINT in done.stderr
