"""``.env`` files behind ``config_list_from_dotenv``: python-dotenv's grammar, parley's refusal
of malformed lines, and the upward search from the current directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from parley.exceptions import DotenvSyntaxError
from parley.oai._dotenv import find_env_file, load_env_file

VAR = "PARLEY_DOTENV_TEST"


@pytest.fixture
def scratch_env(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Variable names the test may set; whatever the loader sets is removed afterwards."""
    names = [f"{VAR}_{n}" for n in "ABC"]
    for name in names:
        monkeypatch.setenv(name, "placeholder")  # recorded as unset, so teardown removes it
        monkeypatch.delenv(name)
    return names


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{a}=1", "1"),
        ("  {a} = spaced  ", "spaced"),
        ("export {a}=1", "1"),
        ("{a}=value # comment", "value"),
        ("{a}=a#b", "a#b"),
        ("{a}=https://h/p?q=1&r=2", "https://h/p?q=1&r=2"),
        ("{a}='single # kept \\n'", "single # kept \\n"),
        ('{a}="a\\nb \\"q\\""', 'a\nb "q"'),
        ('{a}="spans\nlines"', "spans\nlines"),
        ("{a}=", ""),
        ("\ufeff{a}=bom", "bom"),
        ("{a}=1\r\n", "1"),
        ("{a}=${{{b}}}/x", "from-env/x"),  # ${VAR} is expanded, as python-dotenv does
    ],
)
def test_python_dotenv_grammar(
    tmp_path: Path,
    scratch_env: list[str],
    monkeypatch: pytest.MonkeyPatch,
    line: str,
    expected: str,
) -> None:
    a, b, _ = scratch_env
    monkeypatch.setenv(b, "from-env")
    env_file = tmp_path / ".env"
    env_file.write_text(line.format(a=a, b=b), encoding="utf-8")
    load_env_file(env_file)
    assert os.environ[a] == expected


def test_existing_variables_are_kept(
    tmp_path: Path, scratch_env: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, c = scratch_env
    monkeypatch.setenv(b, "from the environment")
    monkeypatch.setenv(c, "")  # set, though empty, still wins
    env_file = tmp_path / ".env"
    env_file.write_text(f"{a}=from file\n{b}=from file\n{c}=from file\n", encoding="utf-8")
    load_env_file(str(env_file))
    assert (os.environ[a], os.environ[b], os.environ[c]) == (
        "from file",
        "from the environment",
        "",
    )


def test_a_bare_key_sets_nothing(tmp_path: Path, scratch_env: list[str]) -> None:
    a, b, _ = scratch_env
    env_file = tmp_path / ".env"
    env_file.write_text(f"{a}\n{b}=1\n", encoding="utf-8")
    load_env_file(env_file)
    assert a not in os.environ
    assert os.environ[b] == "1"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("A=1\n\n# c\nOPENAI_API_KEY sk-secret-value", 4),
        ("=sk-secret-value", 1),
        ("A=1\nB='sk-secret-value", 2),
        ('A=1\nB="sk-secret-value\nC=3\n', 2),
        ('A="multi\nline"\nB="x"sk-secret-value', 3),
        ("A='x' 'sk-secret-value'", 1),
    ],
)
def test_a_malformed_line_names_file_and_line_but_not_the_value(
    tmp_path: Path, text: str, line: int
) -> None:
    env_file = tmp_path / "conf.env"
    env_file.write_text(text, encoding="utf-8")
    with pytest.raises(DotenvSyntaxError) as info:
        load_env_file(env_file)
    message = str(info.value)
    assert message.startswith(f"{env_file}, line {line}:")
    assert "KEY=VALUE" in message
    assert "sk-secret-value" not in message
    assert (info.value.source, info.value.line) == (str(env_file), line)
    assert isinstance(info.value, ValueError)


def test_a_broken_file_sets_nothing(tmp_path: Path, scratch_env: list[str]) -> None:
    a, b, _ = scratch_env
    env_file = tmp_path / ".env"
    env_file.write_text(f"{a}=1\n{b}='unterminated\n", encoding="utf-8")
    with pytest.raises(DotenvSyntaxError, match="line 2"):
        load_env_file(env_file)
    assert a not in os.environ
    assert b not in os.environ


def test_a_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_env_file(tmp_path / "absent.env")


def test_the_search_goes_upward_from_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text("A=1\n", encoding="utf-8")
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert find_env_file() == str(tmp_path / ".env")
    (tmp_path / "a" / ".env").write_text("A=2\n", encoding="utf-8")
    assert find_env_file() == str(tmp_path / "a" / ".env")  # the nearest wins


def test_the_search_finds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert find_env_file("parley-test-no-such-file.env") is None


def test_python_dotenv_is_imported_on_first_use_only(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(f"{VAR}_X=k\n", encoding="utf-8")
    code = (
        "import sys, parley, parley.oai\n"
        "print('dotenv' in sys.modules)\n"
        f"configs = parley.config_list_from_dotenv({str(env_file)!r}, {{'m': '{VAR}_X'}})\n"
        "print('dotenv' in sys.modules, configs == [{'api_key': 'k', 'model': 'm'}])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env,
    )
    assert result.stdout.split() == ["False", "True", "True"]
