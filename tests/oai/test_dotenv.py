"""The ``.env`` parser, loader and upward search behind ``config_list_from_dotenv``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from parley.oai._dotenv import (
    DotenvSyntaxError,
    find_dotenv,
    load_dotenv,
    parse_dotenv,
    read_dotenv,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("\n\n  \n", {}),
        ("# only a comment\n   # indented comment\n", {}),
        ("A=1", {"A": "1"}),
        ("A=1\nB=2\n", {"A": "1", "B": "2"}),
        ("  A = spaced out  \n", {"A": "spaced out"}),
        ("A=", {"A": ""}),
        ("A=   ", {"A": ""}),
        ("export A=1", {"A": "1"}),
        ("export   A=1", {"A": "1"}),
        ("export=1", {"export": "1"}),
        ("A=value # comment", {"A": "value"}),
        ("A=value\t# comment", {"A": "value"}),
        ("A=a#b", {"A": "a#b"}),
        ("A=#not-a-comment", {"A": "#not-a-comment"}),
        ("A=x=y=z", {"A": "x=y=z"}),
        ("A=https://h/p?q=1&r=2", {"A": "https://h/p?q=1&r=2"}),
        ("A='single # kept'", {"A": "single # kept"}),
        ("A='raw \\n $X \\\\'", {"A": "raw \\n $X \\\\"}),
        ('A="double # kept"', {"A": "double # kept"}),
        ('A="a\\nb\\tc"', {"A": "a\nb\tc"}),
        ('A="say \\"hi\\""', {"A": 'say "hi"'}),
        ('A="back\\\\slash"', {"A": "back\\slash"}),
        ('A="unknown \\q escape"', {"A": "unknown \\q escape"}),
        ('A="it\'s"', {"A": "it's"}),
        ("A='say \"hi\"'", {"A": 'say "hi"'}),
        ('A="quoted" # trailing comment', {"A": "quoted"}),
        ("A='quoted'   ", {"A": "quoted"}),
        ('A=""', {"A": ""}),
        ('A="  padded  "', {"A": "  padded  "}),
        ('A="line one\nline two"\nB=2', {"A": "line one\nline two", "B": "2"}),
        ("A=1\nA=2", {"A": "2"}),
        ("A=1\r\nB=2\r\n", {"A": "1", "B": "2"}),
        ("\ufeffA=1", {"A": "1"}),
        ("A.B-C_d=1", {"A.B-C_d": "1"}),
        ("_PRIVATE=1", {"_PRIVATE": "1"}),
    ],
)
def test_parse(text: str, expected: dict[str, str]) -> None:
    assert parse_dotenv(text) == expected


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("JUST_A_KEY", 1, "KEY=VALUE"),
        ("A=1\n\n# c\nOPENAI_API_KEY sk-secret-value", 4, "KEY=VALUE"),
        ("=sk-secret-value", 1, "KEY=VALUE"),
        ("1A=2", 1, "KEY=VALUE"),
        ("A=1\nB='sk-secret-value", 2, "no closing '"),
        ('A=1\nB="sk-secret-value\nC=3\n', 2, 'no closing "'),
        ('A="multi\nline"\nB="x"sk-secret-value', 3, "after the closing"),
        ("A='x' 'sk-secret-value'", 1, "after the closing"),
        ("export sk-secret-value", 1, "KEY=VALUE"),
    ],
)
def test_malformed_line_names_file_and_line_but_not_the_value(
    text: str, line: int, problem: str
) -> None:
    with pytest.raises(DotenvSyntaxError) as info:
        parse_dotenv(text, source="conf/.env")
    message = str(info.value)
    assert message.startswith(f"conf/.env, line {line}:")
    assert problem in message
    assert "sk-secret-value" not in message
    assert info.value.line == line
    assert info.value.source == "conf/.env"
    assert isinstance(info.value, ValueError)


def test_read_dotenv_names_the_file_in_errors(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("GOOD=1\nBAD LINE\n", encoding="utf-8")
    with pytest.raises(DotenvSyntaxError, match=rf"{env_file}, line 2"):
        read_dotenv(env_file)


@pytest.fixture
def scratch_env(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Variable names the test may set; whatever a loader sets is removed afterwards."""
    names = [f"PARLEY_DOTENV_TEST_{n}" for n in "ABC"]
    for name in names:
        monkeypatch.setenv(name, "placeholder")  # recorded as unset, so teardown removes it
        monkeypatch.delenv(name)
    return names


def test_load_sets_missing_variables_and_keeps_existing_ones(
    tmp_path: Path, scratch_env: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, c = scratch_env
    monkeypatch.setenv(b, "from the environment")
    monkeypatch.setenv(c, "")  # set, though empty, still wins
    env_file = tmp_path / ".env"
    env_file.write_text(f"{a}=from file\n{b}=from file\nexport {c}=from file\n", encoding="utf-8")

    applied = load_dotenv(env_file)

    assert applied == [a]
    assert os.environ[a] == "from file"
    assert os.environ[b] == "from the environment"
    assert os.environ[c] == ""


def test_load_with_override_replaces_existing(
    tmp_path: Path, scratch_env: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, _ = scratch_env
    monkeypatch.setenv(b, "old")
    env_file = tmp_path / "custom.env"
    env_file.write_text(f'{a}="x"\n{b}="new"\n', encoding="utf-8")
    assert load_dotenv(str(env_file), override=True) == [a, b]
    assert (os.environ[a], os.environ[b]) == ("x", "new")


def test_load_of_a_broken_file_sets_nothing(tmp_path: Path, scratch_env: list[str]) -> None:
    a, b, _ = scratch_env
    env_file = tmp_path / ".env"
    env_file.write_text(f"{a}=1\n{b}='unterminated\n", encoding="utf-8")
    with pytest.raises(DotenvSyntaxError, match="line 2"):
        load_dotenv(env_file)
    assert a not in os.environ
    assert b not in os.environ


def test_load_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_dotenv(tmp_path / "absent.env")


def test_find_dotenv_searches_upward_from_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text("A=1\n", encoding="utf-8")
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert find_dotenv() == tmp_path / ".env"

    (tmp_path / "a" / ".env").write_text("A=2\n", encoding="utf-8")
    assert find_dotenv() == tmp_path / "a" / ".env"  # the nearest wins


def test_find_dotenv_ignores_directories_and_honours_start(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.env").mkdir()  # a directory, not a file
    (tmp_path / "x.env").write_text("", encoding="utf-8")
    assert find_dotenv("x.env", start=tmp_path / "sub") == tmp_path / "x.env"


def test_find_dotenv_returns_none_when_absent(tmp_path: Path) -> None:
    assert find_dotenv("parley-test-no-such-file.env", start=tmp_path) is None
