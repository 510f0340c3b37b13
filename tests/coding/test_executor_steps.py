"""Writing an executor: ``CommandLineExecutorBase``'s steps are public names; a subclass written
against their earlier underscored names (``_run``, ``_interpreter``, ...) still works, whether
it implements them all or overrides one of a built-in executor's and calls ``super()``."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from parley.coding import CodeBlock, LocalCommandLineCodeExecutor
from parley.coding.executor_base import CommandLineExecutorBase, RunOutcome


class EchoExecutor(CommandLineExecutorBase):
    """Runs nothing: reports what it was asked to run (written with the public names)."""

    def __init__(self, work_dir: Path) -> None:
        super().__init__(timeout=5, work_dir=work_dir, execution_policies=None)

    def normalize_language(self, language: str, code: str) -> str:
        return language.lower()

    def interpreter_for(self, lang: str) -> str | None:
        return "echo-" + lang

    def run_code_file(self, program: str, path: Path) -> RunOutcome:
        return 0, f"{program} {path.name}: {path.read_text()}", False


class OldNamesExecutor(CommandLineExecutorBase):
    """The same, written against the underscored names."""

    def __init__(self, work_dir: Path) -> None:
        super().__init__(timeout=5, work_dir=work_dir, execution_policies=None)

    def _language(self, language: str, code: str) -> str:
        return language.lower()

    def _interpreter(self, lang: str) -> str | None:
        return "old-" + lang

    def _run(self, program: str, path: Path) -> RunOutcome:
        return 3, f"{program} {path.name}", False


class CountingLocal(LocalCommandLineCodeExecutor):
    """A built-in executor with one step overridden under its old name."""

    runs: ClassVar[list[str]] = []

    def _run(self, program: str, path: Path) -> RunOutcome:
        type(self).runs.append(path.name)
        exit_code, output, timed_out = super()._run(program, path)  # type: ignore[misc]
        return exit_code, output.upper(), timed_out


def block(code: str, language: str = "python") -> list[CodeBlock]:
    return [CodeBlock(code=f"# filename: job.py\n{code}", language=language)]


def test_an_executor_written_with_the_public_steps(tmp_path: Path) -> None:
    result = EchoExecutor(tmp_path).execute_code_blocks(block("x = 1", "Python"))
    assert result.exit_code == 0
    assert result.output == "echo-python job.py: # filename: job.py\nx = 1"
    assert result.code_file == str(tmp_path / "job.py")


def test_an_executor_written_with_the_old_names_still_runs(tmp_path: Path) -> None:
    result = OldNamesExecutor(tmp_path).execute_code_blocks(block("x = 1") + block("y = 2"))
    assert result.exit_code == 3  # the first non-zero exit code ends the call
    assert result.output == "old-python job.py"


def test_an_old_name_override_of_a_built_in_executor_is_called(tmp_path: Path) -> None:
    executor = CountingLocal(work_dir=tmp_path, timeout=30)
    result = executor.execute_code_blocks(block("print('hello from ' + 'the block')"))
    assert CountingLocal.runs == ["job.py"]
    assert result.exit_code == 0
    assert result.output.strip() == "HELLO FROM THE BLOCK"
