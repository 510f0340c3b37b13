"""The block loop both command-line executors share: each rule is checked on both of them.

The local executor runs on this machine; the Docker one (``docker`` marker) in a real container
of the sandbox image (see ``_docker_support``). What differs between them on purpose (the order
of stdout and stderr, the languages each can run) has its own tests in their modules.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from parley.coding import CodeBlock, LocalCommandLineCodeExecutor
from parley.coding._process import MAX_OUTPUT_BYTES
from parley.coding.base import CommandLineCodeResult

from . import _docker_support

if TYPE_CHECKING:
    from parley.coding.docker_commandline_code_executor import DockerCommandLineCodeExecutor

Run = Callable[..., CommandLineCodeResult]
"""``run(*blocks, timeout=10, policies=None)``: the executor's result for ``blocks``."""


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def run(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Run]:
    """One executor of the kind asked for per (timeout, policies), all in ``tmp_path``."""
    kind = request.param
    with ExitStack() as stack:
        executors: dict[str, LocalCommandLineCodeExecutor | DockerCommandLineCodeExecutor] = {}

        def execute(
            *blocks: CodeBlock, timeout: int = 10, policies: dict[str, bool] | None = None
        ) -> CommandLineCodeResult:
            key = f"{timeout} {policies}"
            if key not in executors:
                options: dict[str, Any] = {"timeout": timeout, "execution_policies": policies}
                executors[key] = (
                    LocalCommandLineCodeExecutor(work_dir=tmp_path, **options)
                    if kind == "local"
                    else stack.enter_context(_docker_support.executor(tmp_path, **options))
                )
            return executors[key].execute_code_blocks(list(blocks))

        yield execute


def py(code: str) -> CodeBlock:
    return CodeBlock(language="python", code=code)


def sh(code: str) -> CodeBlock:
    return CodeBlock(language="sh", code=code)


def test_an_empty_list_runs_nothing_and_succeeds(run: Run, tmp_path: Path) -> None:
    result = run()
    assert (result.exit_code, result.output, result.code_file) == (0, "", None)
    assert list(tmp_path.iterdir()) == []


def test_blocks_run_in_order_and_stop_at_the_first_failure(run: Run, tmp_path: Path) -> None:
    result = run(py("print('one')"), sh("echo two; exit 3"), sh("touch three; echo three"))
    assert (result.exit_code, result.output) == (3, "one\ntwo\n")
    assert not (tmp_path / "three").exists()


def test_the_code_file_is_the_first_file_written(run: Run, tmp_path: Path) -> None:
    result = run(py("# filename: first.py\nprint(1)"), sh("# filename: second.sh\necho 2"))
    assert result.output == "1\n2\n"
    assert result.code_file == str(tmp_path.resolve() / "first.py")
    assert (tmp_path / "second.sh").read_text() == "# filename: second.sh\necho 2"


def test_an_unknown_language_ends_the_call_with_exit_code_1(run: Run) -> None:
    result = run(py("print(1)"), CodeBlock(language="ruby", code="puts 1"), py("print(2)"))
    assert (result.exit_code, result.output) == (1, "1\n\nunknown language ruby")


def test_a_language_set_to_run_that_cannot_run_is_reported(run: Run, tmp_path: Path) -> None:
    result = run(CodeBlock(language="html", code="<p>hi</p>"), policies={"html": True})
    assert result.exit_code == 1
    assert result.output == "\nunknown language html: it can be saved but not executed"
    assert result.code_file is None
    assert list(tmp_path.iterdir()) == []


def test_a_language_set_to_save_is_saved_not_run(run: Run, tmp_path: Path) -> None:
    result = run(
        CodeBlock(language="javascript", code="console.log(1)"),
        CodeBlock(language="Python", code="print('ran')"),
        policies={"python": False},
    )
    assert result.exit_code == 0
    saved = result.output.splitlines()
    assert all(line.startswith("Code saved to ") for line in saved), saved
    first, second = (Path(line.removeprefix("Code saved to ")) for line in saved)
    assert (first.parent, first.suffix) == (tmp_path.resolve(), ".javascript")
    assert first.read_text() == "console.log(1)"
    assert (second.suffix, second.read_text()) == (".py", "print('ran')")
    assert result.code_file == str(first)


def test_a_file_name_outside_the_work_dir_ends_the_call(run: Run, tmp_path: Path) -> None:
    result = run(py("print('before')"), py("# filename: ../outside.py\nprint('no')"))
    assert (result.exit_code, result.output, result.code_file) == (
        1,
        "Filename is not in the workspace",
        None,
    )
    assert not (tmp_path.parent / "outside.py").exists()


def test_a_file_that_cannot_be_written_is_reported(run: Run, tmp_path: Path) -> None:
    assert run(py("print(0)")).output == "0\n"  # the executor takes its fresh work dir first
    (tmp_path / "taken.py").mkdir()
    result = run(py("print('first')"), py("# filename: taken.py\nprint('no')"))
    assert result.exit_code == 1
    assert result.output.startswith("first\n\ncould not write the code file: ")
    assert "taken.py" in result.output


def test_pip_install_lines_are_made_quiet(run: Run) -> None:
    result = run(sh('pip() { echo "pip $*"; }\npip install nothing'))
    assert (result.exit_code, result.output) == (0, "pip install -qqq nothing\n")


def test_a_timeout_keeps_the_output_and_says_timeout(run: Run) -> None:
    run(py("pass"), timeout=2)  # the container starts outside the timing
    start = time.monotonic()
    result = run(
        py("print('first')"),
        py("import time\nprint('partial')\ntime.sleep(60)"),
        py("print('never')"),
        timeout=2,
    )
    assert time.monotonic() - start < 30  # stopped at its 2 s deadline, not after its 60 s
    assert (result.exit_code, result.output) == (124, "first\npartial\n\nTimeout")


def test_output_is_capped_with_a_marker_counting_what_was_dropped(run: Run) -> None:
    result = run(py("import sys\nsys.stdout.write('x' * 2_000_000)"))
    assert result.exit_code == 0
    dropped = 2_000_000 - MAX_OUTPUT_BYTES
    assert (
        result.output
        == "x" * MAX_OUTPUT_BYTES + f"\n[... output truncated: {dropped} more bytes ...]"
    )


def test_endless_output_is_capped_and_the_timeout_still_said(run: Run) -> None:
    code = "import sys\nprint('start')\nwhile True:\n    sys.stdout.write('y' * 65536)"
    result = run(py("print('before')"), py(code), timeout=2)
    assert result.exit_code == 124
    assert result.output.startswith("before\nstart\nyyy")
    assert re.search(
        r"\n\[\.\.\. output truncated: \d+ more bytes \.\.\.\]\nTimeout\Z", result.output
    )
    assert len(result.output) < MAX_OUTPUT_BYTES + 200
