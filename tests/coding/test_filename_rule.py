"""The ``# filename:`` rule on every path that runs code (README, "Files").

A block whose first line is ``# filename: NAME`` is saved as NAME, relative to the work dir
(sub-directories are created), and runs from there (for the executors ``# NAME`` too, as in
AutoGen); a NAME leading out of the work dir is
refused with a clear result and nothing is written outside. The same for the local and Docker
executors and for the legacy path (``code_execution_config`` without an executor), local and in
Docker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from parley import ConversableAgent
from parley.coding import CodeBlock, LocalCommandLineCodeExecutor
from parley.io import IOScripted, IOStream

# (exit code, output) of running python blocks in ``work_dir``.
Runner = Callable[[Path, list[str]], tuple[int, str]]


@contextmanager
def _executor_runner(kind: str) -> Iterator[Runner]:
    def run_with(executor_factory: Callable[[Path], object]) -> Runner:
        def run(work_dir: Path, blocks: list[str]) -> tuple[int, str]:
            executor = executor_factory(work_dir)
            try:
                result = executor.execute_code_blocks(  # type: ignore[attr-defined]
                    [CodeBlock(code=code, language="python") for code in blocks]
                )
            finally:
                executor.stop()  # type: ignore[attr-defined]
            return result.exit_code, result.output

        return run

    if kind == "local":
        yield run_with(lambda work: LocalCommandLineCodeExecutor(work_dir=work, timeout=20))
    else:
        from parley.coding import DockerCommandLineCodeExecutor

        from ._docker_support import ensure_sandbox_image

        image = ensure_sandbox_image()
        yield run_with(
            lambda work: DockerCommandLineCodeExecutor(image=image, work_dir=work, timeout=20)
        )


@contextmanager
def _legacy_runner(kind: str) -> Iterator[Runner]:
    use_docker: object = False
    if kind == "docker":
        from ._docker_support import ensure_sandbox_image

        use_docker = ensure_sandbox_image()

    def run(work_dir: Path, blocks: list[str]) -> tuple[int, str]:
        agent = ConversableAgent(
            "runner",
            llm_config=False,
            human_input_mode="NEVER",
            code_execution_config={"work_dir": str(work_dir), "use_docker": use_docker},
        )
        with IOStream.set_default(IOScripted()):
            return agent.execute_code_blocks([("python", code) for code in blocks])

    try:
        yield run
    finally:
        if kind == "docker":
            from parley.coding.docker_commandline_code_executor import _close_legacy_executors

            _close_legacy_executors()


PATHS = [
    pytest.param((_executor_runner, "local"), id="local-executor"),
    pytest.param((_executor_runner, "docker"), id="docker-executor", marks=pytest.mark.docker),
    pytest.param((_legacy_runner, "local"), id="legacy-local"),
    pytest.param((_legacy_runner, "docker"), id="legacy-docker", marks=pytest.mark.docker),
]


@pytest.fixture(params=PATHS)
def run(request: pytest.FixtureRequest) -> Iterator[Runner]:
    factory, kind = request.param
    with factory(kind) as runner:
        yield runner


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work_dir = tmp_path / "work"
    work_dir.mkdir()
    return work_dir


def test_the_named_file_is_saved_in_the_work_dir_and_run_from_there(
    run: Runner, work: Path
) -> None:
    code = "# filename: hello.py\nimport os\nprint(os.path.basename(__file__))"
    exit_code, output = run(work, [code])
    assert exit_code == 0, output
    assert "hello.py" in output
    assert (work / "hello.py").read_text() == code


def test_a_nested_relative_name_creates_its_folders(run: Runner, work: Path) -> None:
    code = (
        "# filename: sub/deeper/x.py\nimport os\n"
        "print(os.path.relpath(os.path.abspath(__file__), os.getcwd()))"
    )
    exit_code, output = run(work, [code])
    assert exit_code == 0, output
    assert "sub/deeper/x.py" in output
    assert (work / "sub" / "deeper" / "x.py").read_text() == code


@pytest.mark.parametrize("name", ["../escape.py", "sub/../../escape.py", "{outside}/abs.py"])
def test_a_name_leading_out_of_the_work_dir_is_refused(
    run: Runner, work: Path, tmp_path: Path, name: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    code = f"# filename: {name.format(outside=outside)}\nprint('escaped')"
    exit_code, output = run(work, [code])
    assert exit_code == 1
    assert "Filename is not in the workspace" in output
    assert "escaped" not in output
    assert not (tmp_path / "escape.py").exists()
    assert list(outside.iterdir()) == []


def test_a_comment_without_the_label_names_the_file_for_executors_only(
    run: Runner, work: Path, request: pytest.FixtureRequest
) -> None:
    """AutoGen's two rules: its executors take any first-line comment as the file name
    (``autogen.coding.utils``); its legacy path reads only ``# filename: ``."""
    exit_code, output = run(work, ["# compute primes\nprint('ran')"])
    assert exit_code == 0, output
    assert "ran" in output
    legacy = "legacy" in request.node.callspec.id
    assert (work / "compute primes").exists() is not legacy
    if not legacy:
        assert (work / "compute primes").read_text() == "# compute primes\nprint('ran')"
