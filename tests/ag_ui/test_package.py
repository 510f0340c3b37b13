"""``parley.ag_ui`` is optional: ``import parley`` never loads it or the protocol's package, and
without the extra its import says which one to install."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("ag_ui.core")

import parley.ag_ui
from parley import AssistantAgent
from parley.ag_ui import AGUIStream


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_parley_does_not_load_it() -> None:
    result = _fresh(
        "import json, sys, parley, parley.cli\n"
        "heavy = ['parley.ag_ui', 'ag_ui', 'starlette', 'uvicorn']\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]))"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_without_the_extra_the_import_error_names_it() -> None:
    result = _fresh("import sys\nsys.modules['ag_ui'] = None\nimport parley.ag_ui")
    assert result.returncode == 1
    assert "ImportError: parley.ag_ui needs the ag-ui-protocol package" in result.stderr
    assert "pip install 'parley[ag-ui]'" in result.stderr


def test_the_public_names() -> None:
    assert sorted(parley.ag_ui.__all__) == [
        "AGUIServer",
        "AGUIStream",
        "APPROVAL_SCHEMA",
        "AgentFactory",
        "INPUT_SCHEMA",
        "INSTALL_HINT",
    ]


def test_bad_arguments_are_named() -> None:
    agent = AssistantAgent("a", llm_config=False)
    with pytest.raises(TypeError, match=r"\['message'\]"):
        AGUIStream(agent, message="hi")
    with pytest.raises(ValueError, match="interrupt_timeout"):
        AGUIStream(agent, interrupt_timeout=0)
    with pytest.raises(TypeError, match="an agent or a factory"):
        AGUIStream("agent")
    with pytest.raises(TypeError, match=r"return \(agent, user\)"):
        AGUIStream(lambda: agent, user=agent)
