"""Issue 34, item 5: pip options given as requirements (``python_packages``) must not reach pip.

The reported cases: ``python_packages=["--index-url=URL", ...]``, ``["--extra-index-url", URL]``
and ``["--no-index", "--find-links=D", "--target=V", "pkg"]`` were passed to pip as they were;
the last installed into any folder, parley's own site-packages included. Now only PEP 508
requirement specifiers are accepted (``packaging``), refused with ``InvalidRequirementError``
naming the entry when the executor is built, before pip ever runs, and pip gets them after
``--``. Valid requirements still install, from hand-made wheels in a local folder (never the
internet).
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from parley.coding import CodeBlock, DockerCommandLineCodeExecutor, LocalCommandLineCodeExecutor
from parley.coding.func_with_reqs import FunctionWithRequirements, with_requirements
from parley.exceptions import InvalidRequirementError
from tests.coding._wheels import TINY_MODULE, make_wheel, offline_pip, tiny_wheels

USES_TINYPKG = "from functions import quadruple\nprint(quadruple(5))"


def quadruple(x: int) -> int:
    import tinypkg  # type: ignore[import-not-found]

    return int(tinypkg.double(tinypkg.double(x)))


def needing(packages: list[str]) -> FunctionWithRequirements[int, ...]:
    return with_requirements(python_packages=packages)(quadruple)


EXECUTORS = [LocalCommandLineCodeExecutor, DockerCommandLineCodeExecutor]


def issue_cases(tmp_path: Path) -> list[tuple[list[str], str]]:
    """The issue's three lists, with the entry each must be refused for."""
    site = sysconfig.get_paths()["purelib"]  # parley's own site-packages
    return [
        (
            ["--index-url=http://127.0.0.1:9/simple", "tinypkg"],
            "--index-url=http://127.0.0.1:9/simple",
        ),
        (["--extra-index-url", "http://127.0.0.1:9/simple"], "--extra-index-url"),
        (["--no-index", f"--find-links={tmp_path}", f"--target={site}", "tinypkg"], "--no-index"),
        (["tinypkg", f"--target={tmp_path / 'v'}"], f"--target={tmp_path / 'v'}"),
    ]


@pytest.mark.parametrize("kind", EXECUTORS)
@pytest.mark.parametrize("case", range(4))
def test_the_issues_pip_options_are_refused_before_pip_runs(
    kind: type, case: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheels = tiny_wheels(tmp_path / "wheels")
    offline_pip(monkeypatch, wheels)  # were pip run, tinypkg could be installed
    packages, bad = issue_cases(tmp_path)[case]
    with pytest.raises(InvalidRequirementError) as refused:
        kind(work_dir=tmp_path / "work", functions=[needing(packages)])
    assert refused.value.entry == bad
    assert repr(bad) in str(refused.value)
    assert "pip option" in str(refused.value)
    assert not (tmp_path / "v").exists()
    assert not (tmp_path / "work").exists()  # refused before anything was set up


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("./tinypkg", "not a PEP 508 requirement"),
        ("tinypkg.whl", "pip would read it as a file"),
        ("tinypkg-1.0.tar.gz", "pip would read it as a file"),
        ("tinypkg @ http://127.0.0.1:9/tinypkg-1.0-py3-none-any.whl", "scheme 'http'"),
        ("tinypkg ; --target=/tmp", "not a PEP 508 requirement"),
        ("-r requirements.txt", "pip option"),
        ("  --target=/tmp", "pip option"),
        ("", "empty"),
    ],
)
def test_other_entries_that_are_not_requirements_are_refused(
    entry: str, why: str, tmp_path: Path
) -> None:
    with pytest.raises(InvalidRequirementError, match=why) as refused:
        LocalCommandLineCodeExecutor(work_dir=tmp_path / "work", functions=[needing([entry])])
    assert refused.value.entry == entry


def test_a_string_functions_requirements_are_checked_too(tmp_path: Path) -> None:
    func = FunctionWithRequirements.from_str(
        "def one() -> int:\n    return 1\n", python_packages=["--target=/tmp/x"]
    )
    with pytest.raises(InvalidRequirementError, match="--target=/tmp/x"):
        LocalCommandLineCodeExecutor(work_dir=tmp_path / "work", functions=[func])


def test_a_valid_specifier_still_installs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    offline_pip(monkeypatch, tiny_wheels(tmp_path / "wheels"))
    needs = needing(["tinypkg>=1.0 ; python_version >= '3'"])
    with LocalCommandLineCodeExecutor(work_dir=tmp_path / "work", functions=[needs]) as executor:
        result = executor.execute_code_blocks([CodeBlock(language="python", code=USES_TINYPKG)])
    assert result.exit_code == 0, result.output
    assert result.output == "20\n"


def test_a_file_url_requirement_installs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``name @ file:///...`` is how a local wheel is named: accepted (it cannot change where
    pip installs, nor its index for anything else)."""
    wheel = make_wheel(tmp_path / "elsewhere", "tinypkg", "1.0", {"tinypkg.py": TINY_MODULE})
    offline_pip(monkeypatch, tmp_path / "empty")  # no index, no folder of wheels: the URL only
    needs = needing([f"tinypkg @ {wheel.as_uri()}"])
    with LocalCommandLineCodeExecutor(work_dir=tmp_path / "work", functions=[needs]) as executor:
        result = executor.execute_code_blocks([CodeBlock(language="python", code=USES_TINYPKG)])
    assert result.exit_code == 0, result.output
    assert result.output == "20\n"
