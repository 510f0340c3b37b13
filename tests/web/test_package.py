"""``parley.web`` is optional: ``import parley`` (and the ``parley`` command) never load it or
its server stack, and without Starlette and uvicorn its import says which extra to install."""

from __future__ import annotations

import json
import subprocess
import sys

import parley.web


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_parley_and_its_command_do_not_load_the_web_stack() -> None:
    result = _fresh(
        "import json, sys, parley, parley.cli\n"
        "heavy = ['parley.web', 'starlette', 'uvicorn', 'websockets', 'selenium']\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]))"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_without_the_extra_the_import_error_names_it() -> None:
    result = _fresh("import sys\nsys.modules['uvicorn'] = None\nimport parley.web")
    assert result.returncode == 1
    assert "ImportError: parley.web needs Starlette and uvicorn" in result.stderr
    assert "pip install 'parley[web]'" in result.stderr


def test_the_public_names() -> None:
    assert sorted(parley.web.__all__) == [
        "AnswerRefusedError",
        "HumanRequest",
        "INSTALL_HINT",
        "WebHuman",
        "WebHumanClosedError",
        "WebIOStream",
        "serve",
    ]
    assert parley.web.INSTALL_HINT == "pip install 'parley[web]'"
    assert issubclass(parley.web.WebHumanClosedError, EOFError)
