"""``parley.formatting_utils.colored``: termcolor's signature and rules, no termcolor needed."""

from __future__ import annotations

import io
import re
import sys
from typing import Any

import pytest

import parley
from parley.formatting_utils import colored

ESC = "\033["


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("NO_COLOR", "FORCE_COLOR", "ANSI_COLORS_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def on_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    # Inside the test, not in a fixture: pytest's output capture replaces sys.stdout again
    # between a fixture's setup and the test.
    monkeypatch.setattr(sys, "stdout", Terminal())


def test_the_module_is_an_attribute_of_parley() -> None:
    assert parley.formatting_utils.colored is colored


def test_colours_on_a_terminal(clean_env: pytest.MonkeyPatch) -> None:
    on_terminal(clean_env)
    assert colored("hi", "red") == "\033[31mhi\033[0m"
    assert colored("hi", "light_blue", "on_white", ["bold", "underline"]) == (
        "\033[94m\033[107m\033[1m\033[4mhi\033[0m"
    )
    assert colored(42, "green") == "\033[32m42\033[0m"  # any object, as str()


def test_nothing_asked_is_plain_text(clean_env: pytest.MonkeyPatch) -> None:
    on_terminal(clean_env)
    assert colored("hi") == "hi"
    assert colored("hi", attrs=[]) == "hi"


def test_plain_when_stdout_is_not_a_terminal(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setattr(sys, "stdout", io.StringIO())
    assert colored("hi", "red", attrs=["bold"]) == "hi"


@pytest.mark.parametrize("variable", ["NO_COLOR", "ANSI_COLORS_DISABLED"])
def test_no_color_variables_turn_colours_off(variable: str, clean_env: pytest.MonkeyPatch) -> None:
    on_terminal(clean_env)
    clean_env.setenv(variable, "1")
    assert colored("hi", "red") == "hi"
    assert colored("hi", "red", force_color=True) == "\033[31mhi\033[0m"  # the argument wins


def test_an_empty_no_color_does_not_count(clean_env: pytest.MonkeyPatch) -> None:
    on_terminal(clean_env)
    clean_env.setenv("NO_COLOR", "")  # https://no-color.org: present *and* not empty
    assert colored("hi", "red").startswith(ESC)


def test_force_color_colours_pipes(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setattr(sys, "stdout", io.StringIO())
    clean_env.setenv("FORCE_COLOR", "1")
    assert colored("hi", "red").startswith(ESC)
    assert colored("hi", "red", no_color=True) == "hi"


def test_a_stdout_without_isatty_means_plain(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setattr(sys, "stdout", object())
    assert colored("hi", "red") == "hi"


@pytest.mark.parametrize(
    ("kwargs", "what"),
    [
        ({"color": "purple"}, "color='purple'"),
        ({"on_color": "white"}, "on_color='white'"),
        ({"attrs": ["italic"]}, "attrs='italic'"),
    ],
)
def test_unknown_names_raise_key_error_even_without_colours(
    kwargs: dict[str, Any], what: str, clean_env: pytest.MonkeyPatch
) -> None:
    clean_env.setenv("NO_COLOR", "1")
    with pytest.raises(KeyError, match=re.escape(what)):
        colored("hi", **kwargs)
