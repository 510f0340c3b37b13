"""IOConsole: the terminal, through the builtins."""

from __future__ import annotations

import getpass
import io

import pytest

from parley.io import IOConsole, IOStream


def test_print_goes_to_current_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    console = IOConsole()
    console.print("a", 1, None)
    console.print("x", "y", sep="-", end="!", flush=True)
    assert capsys.readouterr().out == "a 1 None\nx-y!"


def test_global_default_console_prints_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert isinstance(IOStream.get_default(), IOConsole)
    IOStream.get_default().print("via the default")
    assert capsys.readouterr().out == "via the default\n"


def test_input_reads_a_line_from_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("first answer\nsecond\n"))
    console = IOConsole()
    assert console.input("Your name: ") == "first answer"
    assert console.input() == "second"
    assert capsys.readouterr().out == "Your name: "


def test_input_at_end_of_stdin_raises_eof(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    with pytest.raises(EOFError):
        IOConsole().input("> ")


@pytest.mark.parametrize(("prompt", "shown"), [("", "Password: "), ("API key: ", "API key: ")])
def test_password_input_uses_getpass(
    monkeypatch: pytest.MonkeyPatch, prompt: str, shown: str
) -> None:
    prompts: list[str] = []

    def fake_getpass(prompt: str = "Password: ", stream: object = None) -> str:
        prompts.append(prompt)
        return "s3cret"

    monkeypatch.setattr(getpass, "getpass", fake_getpass)
    assert IOConsole().input(prompt, password=True) == "s3cret"
    assert prompts == [shown]
