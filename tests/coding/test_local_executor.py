"""``LocalCommandLineCodeExecutor``: AutoGen's behaviour and parley's differences (the module's
docstring lists them; the rules shared with the Docker executor are tested in test_block_loop)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from parley.code_utils import create_virtual_env
from parley.coding import (
    CodeBlock,
    CodeExecutor,
    LocalCommandLineCodeExecutor,
    MarkdownCodeExtractor,
)
from parley.coding.base import CommandLineCodeResult
from parley.coding.local_commandline_code_executor import (
    CommandlineCodeResult,
    LocalCommandlineCodeExecutor,
    silence_pip,
)


@pytest.fixture
def executor(tmp_path: Path) -> LocalCommandLineCodeExecutor:
    return LocalCommandLineCodeExecutor(work_dir=tmp_path, timeout=10)


def py(code: str) -> CodeBlock:
    return CodeBlock(code=code, language="python")


def sh(code: str) -> CodeBlock:
    return CodeBlock(code=code, language="sh")


# -- construction -------------------------------------------------------------------------------


def test_defaults_and_properties(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    executor = LocalCommandLineCodeExecutor()
    assert executor.timeout == 60
    assert executor.work_dir == Path("coding")  # a dedicated folder, not AutoGen's "."
    assert (tmp_path / "coding").is_dir()
    assert executor.functions == []
    assert executor.functions_module == "functions"
    assert isinstance(executor.code_extractor, MarkdownCodeExtractor)
    assert isinstance(executor, CodeExecutor)
    assert executor.execution_policies == LocalCommandLineCodeExecutor.DEFAULT_EXECUTION_POLICY
    assert executor.execution_policies is not LocalCommandLineCodeExecutor.DEFAULT_EXECUTION_POLICY


def test_class_attributes() -> None:
    assert LocalCommandLineCodeExecutor.SUPPORTED_LANGUAGES == [
        "bash", "shell", "sh", "pwsh", "powershell", "ps1", "python", "javascript", "html", "css",
    ]  # fmt: skip
    policy = LocalCommandLineCodeExecutor.DEFAULT_EXECUTION_POLICY
    assert all(
        policy[lang] for lang in ("bash", "shell", "sh", "pwsh", "powershell", "ps1", "python")
    )
    assert not any(policy[lang] for lang in ("javascript", "html", "css"))


def test_constructor_validation(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="Timeout"):
        LocalCommandLineCodeExecutor(timeout=0, work_dir=tmp_path)
    with pytest.raises(ValueError, match="identifier"):
        LocalCommandLineCodeExecutor(functions_module="my-mod", work_dir=tmp_path)
    with pytest.raises(FileNotFoundError):
        LocalCommandLineCodeExecutor(work_dir=tmp_path / "a" / "b" / "c")


def test_work_dir_is_created(tmp_path: Path) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir=str(tmp_path / "new"))
    assert executor.work_dir == tmp_path / "new"
    assert (tmp_path / "new").is_dir()


def test_execution_policies_update_a_copy(tmp_path: Path) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path, execution_policies={"python": False})
    assert executor.execution_policies["python"] is False
    assert executor.execution_policies["sh"] is True
    assert LocalCommandLineCodeExecutor.DEFAULT_EXECUTION_POLICY["python"] is True


def test_format_functions_for_prompt(executor: LocalCommandLineCodeExecutor) -> None:
    assert "`functions`" in executor.format_functions_for_prompt()
    assert executor.format_functions_for_prompt("$module_name:$functions.") == "functions:."


# -- running ------------------------------------------------------------------------------------


def test_python_block(executor: LocalCommandLineCodeExecutor, tmp_path: Path) -> None:
    result = executor.execute_code_blocks([py("print('hello')")])
    assert isinstance(result, CommandLineCodeResult)
    assert (result.exit_code, result.output) == (0, "hello\n")
    assert result.code_file is not None
    assert Path(result.code_file).parent == tmp_path.resolve()
    assert Path(result.code_file).name.startswith("tmp_code_")
    assert Path(result.code_file).suffix == ".py"
    assert Path(result.code_file).read_text() == "print('hello')"  # files are kept


def test_runs_in_the_work_dir(executor: LocalCommandLineCodeExecutor, tmp_path: Path) -> None:
    result = executor.execute_code_blocks([py("import os; print(os.getcwd())"), sh("pwd")])
    assert result.output == f"{tmp_path.resolve()}\n{tmp_path.resolve()}\n"


def test_stderr_comes_before_stdout(executor: LocalCommandLineCodeExecutor) -> None:
    code = "import sys\nprint('o')\nsys.stderr.write('e\\n')"
    assert executor.execute_code_blocks([py(code)]).output == "e\no\n"


def test_filename_comment(executor: LocalCommandLineCodeExecutor, tmp_path: Path) -> None:
    result = executor.execute_code_blocks([py("# filename: sub/hello.py\nprint('hi')")])
    assert (result.exit_code, result.output) == (0, "hi\n")
    assert (tmp_path / "sub" / "hello.py").exists()
    result = executor.execute_code_blocks([sh("# filename: run.sh\necho sh")])
    assert result.output == "sh\n"
    assert (tmp_path / "run.sh").exists()


def test_a_first_line_comment_names_the_file_with_or_without_the_label(
    executor: LocalCommandLineCodeExecutor, tmp_path: Path
) -> None:
    # AutoGen's executors' rule: any first-line comment, labelled or not.
    result = executor.execute_code_blocks([py("# compute.py\nprint(2)")])
    assert (result.exit_code, result.output) == (0, "2\n")
    assert result.code_file == str((tmp_path / "compute.py").resolve())
    assert (tmp_path / "compute.py").read_text() == "# compute.py\nprint(2)"
    result = executor.execute_code_blocks([py("  # filename:   spaced.py  \nprint(3)")])
    assert Path(str(result.code_file)).name == "spaced.py"
    result = executor.execute_code_blocks([py("# compute primes\nprint(5)")])
    assert result.output == "5\n"
    assert (tmp_path / "compute primes").exists()  # AutoGen writes this file too


@pytest.mark.parametrize(
    "first_line", ["#!/usr/bin/env python", "#", "# filename:", "print(1)  # x.py", "#x.py"]
)
def test_first_lines_that_name_no_file(
    executor: LocalCommandLineCodeExecutor, first_line: str
) -> None:
    result = executor.execute_code_blocks([py(f"{first_line}\nprint(1)")])
    assert result.exit_code == 0, result.output
    assert Path(str(result.code_file)).name.startswith("tmp_code_")


def test_blocks_of_save_only_languages_are_saved_not_run(
    executor: LocalCommandLineCodeExecutor, tmp_path: Path
) -> None:
    blocks = [
        CodeBlock(code="// test.js\nconsole.log('ran')", language="javascript"),
        CodeBlock(code="/* filename: style.css */\nbody {}", language="css"),
        CodeBlock(code="<!-- page.html -->\n<p>hi</p>", language="html"),
    ]
    result = executor.execute_code_blocks(blocks)
    saved = [tmp_path / "test.js", tmp_path / "style.css", tmp_path / "page.html"]
    assert result.exit_code == 0
    assert result.output == "".join(f"Code saved to {path.resolve()}\n" for path in saved)
    assert result.code_file == str(saved[0].resolve())  # the first block's file, as AutoGen
    assert [path.read_text() for path in saved] == [block.code for block in blocks]


def test_policies_set_to_false_save_python_and_shell_blocks_only(tmp_path: Path) -> None:
    executor = LocalCommandLineCodeExecutor(
        work_dir=tmp_path, execution_policies={"python": False, "bash": False, "sh": False}
    )
    result = executor.execute_code_blocks(
        [py("# filename: test.py\nprint('hello world!')"), sh("# run.sh\necho ran > out.txt")]
    )
    assert result.exit_code == 0
    assert "hello world!" not in result.output
    assert result.output == (
        f"Code saved to {(tmp_path / 'test.py').resolve()}\n"
        f"Code saved to {(tmp_path / 'run.sh').resolve()}\n"
    )
    assert not (tmp_path / "out.txt").exists()


def test_language_aliases(executor: LocalCommandLineCodeExecutor) -> None:
    blocks = [
        CodeBlock(code="print('py')", language="py"),
        CodeBlock(code="print('Py')", language="Python"),
        CodeBlock(code="echo $((2+2))", language="bash"),
        CodeBlock(code="echo shell", language="shell"),
        CodeBlock(code="echo SH", language="SH"),
    ]
    assert executor.execute_code_blocks(blocks).output == "py\nPy\n4\nshell\nSH\n"


def test_python_is_this_interpreter(executor: LocalCommandLineCodeExecutor) -> None:
    result = executor.execute_code_blocks([py("import sys; print(sys.executable)")])
    assert result.output == sys.executable + "\n"


@pytest.mark.skipif(shutil.which("pwsh") is not None, reason="PowerShell is installed here")
def test_missing_interpreter_is_reported(executor: LocalCommandLineCodeExecutor) -> None:
    result = executor.execute_code_blocks([CodeBlock(code="Write-Output 1", language="pwsh")])
    assert result.exit_code == 127
    assert "pwsh: command not found" in result.output


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_javascript_runs_when_allowed(tmp_path: Path) -> None:
    executor = LocalCommandLineCodeExecutor(
        work_dir=tmp_path, execution_policies={"javascript": True}
    )
    result = executor.execute_code_blocks(
        [CodeBlock(code="console.log(6*7)", language="javascript")]
    )
    assert (result.exit_code, result.output) == (0, "42\n")


def test_pip_install_lines_are_silenced() -> None:
    assert silence_pip("pip install numpy\necho x", "sh") == "pip install -qqq numpy\necho x"
    assert silence_pip("pip install -qqq numpy", "bash") == "pip install -qqq numpy"
    assert silence_pip("!pip install numpy", "python") == "!pip install -qqq numpy"
    assert silence_pip("! pip install numpy", "python") == "! pip install -qqq numpy"
    assert silence_pip("pip install numpy", "javascript") == "pip install numpy"


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /",
        "mv important /dev/null",
        "dd if=/dev/zero of=x",
        "echo x > /dev/sda1",
        ":(){ :|:& };:",
    ],
)
def test_dangerous_shell_commands_raise(
    executor: LocalCommandLineCodeExecutor, command: str
) -> None:
    with pytest.raises(ValueError, match="Potentially dangerous command detected"):
        executor.execute_code_blocks([sh(command)])
    LocalCommandLineCodeExecutor.sanitize_command("python", command)  # only shells are checked


def test_virtual_env_context(tmp_path: Path) -> None:
    context = create_virtual_env(str(tmp_path / "venv"), with_pip=False)
    work = tmp_path / "work"
    executor = LocalCommandLineCodeExecutor(work_dir=work, virtual_env_context=context)
    result = executor.execute_code_blocks(
        [
            py("import sys; print(sys.prefix)"),
            sh('echo "$VIRTUAL_ENV"; echo "$PATH" | cut -d: -f1'),
        ]
    )
    venv_dir = str((tmp_path / "venv").resolve())
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert Path(lines[0]).resolve() == Path(venv_dir)
    assert lines[1] == str(Path(context.env_dir).absolute())
    assert lines[2] == str(Path(context.bin_path).absolute())


def test_virtual_env_given_by_a_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    context = create_virtual_env("envs/relative_venv", with_pip=False)
    assert not Path(context.bin_path).is_absolute()
    executor = LocalCommandLineCodeExecutor(work_dir="work", virtual_env_context=context)
    result = executor.execute_code_blocks(
        [py("import sys; print(sys.executable); print(sys.prefix != sys.base_prefix)")]
    )
    assert result.exit_code == 0, result.output
    interpreter, in_venv = result.output.splitlines()
    assert Path(interpreter).parent.samefile(tmp_path / context.bin_path)
    assert in_venv == "True"
    assert executor._virtual_env_context is context  # AutoGen's attribute, as given


def test_extra_env(tmp_path: Path) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path, env={"GREETING": "bonjour"})
    assert executor.execute_code_blocks([sh('echo "$GREETING"')]).output == "bonjour\n"


def test_context_manager_restart_and_stop(tmp_path: Path) -> None:
    with LocalCommandLineCodeExecutor(work_dir=tmp_path) as executor:
        assert executor.execute_code_blocks([py("print(5)")]).output == "5\n"
        with pytest.warns(UserWarning, match="not supported"):
            executor.restart()
    executor.stop()


def test_deprecated_aliases(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match="LocalCommandLineCodeExecutor"):
        old = LocalCommandlineCodeExecutor(work_dir=tmp_path)
    assert type(old) is LocalCommandLineCodeExecutor
    assert isinstance(old, LocalCommandlineCodeExecutor)
    assert isinstance(LocalCommandLineCodeExecutor(work_dir=tmp_path), LocalCommandlineCodeExecutor)
    assert issubclass(LocalCommandLineCodeExecutor, LocalCommandlineCodeExecutor)
    with pytest.warns(DeprecationWarning, match="CommandLineCodeResult"):
        result = CommandlineCodeResult(exit_code=0, output="x")
    assert isinstance(result, CommandLineCodeResult)
    assert isinstance(CommandLineCodeResult(exit_code=0, output=""), CommandlineCodeResult)


def test_stdin_is_empty(executor: LocalCommandLineCodeExecutor) -> None:
    result = executor.execute_code_blocks([py("print(input())")])
    # Waiting for a terminal would end at the executor's 10 s timeout (exit code 124).
    assert result.exit_code == 1
    assert "EOFError" in result.output


def test_unicode_output(executor: LocalCommandLineCodeExecutor) -> None:
    assert executor.execute_code_blocks([py("print('héllo ✓')")]).output == "héllo ✓\n"
