"""``CodeExecutorFactory`` and the ``parley.coding`` package surface."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import parley.coding
from parley.coding import (
    CodeBlock,
    CodeExecutor,
    CodeExecutorFactory,
    CodeResult,
    LocalCommandLineCodeExecutor,
    MarkdownCodeExtractor,
)
from tests.coding._jupyter_support import alive, processes_mentioning, wait_until_gone


class EchoExecutor:
    """A user-defined executor: satisfies CodeExecutor structurally, as in the docs' notebook."""

    @property
    def code_extractor(self) -> MarkdownCodeExtractor:
        return MarkdownCodeExtractor()

    def execute_code_blocks(self, code_blocks: list[CodeBlock]) -> CodeResult:
        return CodeResult(exit_code=0, output="".join(b.code for b in code_blocks))

    def restart(self) -> None:
        pass


def test_an_executor_object_is_returned_as_is(tmp_path: Path) -> None:
    local = LocalCommandLineCodeExecutor(work_dir=tmp_path)
    assert CodeExecutorFactory.create({"executor": local}) is local
    custom = EchoExecutor()
    assert isinstance(custom, CodeExecutor)
    assert CodeExecutorFactory.create({"executor": custom, "last_n_messages": 2}) is custom


def test_commandline_local_is_built_from_its_entry(tmp_path: Path) -> None:
    executor = CodeExecutorFactory.create(
        {"executor": "commandline-local", "commandline-local": {"work_dir": tmp_path, "timeout": 7}}
    )
    assert isinstance(executor, LocalCommandLineCodeExecutor)
    assert executor.work_dir == tmp_path
    assert executor.timeout == 7
    result = executor.execute_code_blocks([CodeBlock(code="print(2 + 2)", language="python")])
    assert (result.exit_code, result.output) == (0, "4\n")


def test_commandline_local_without_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    executor = CodeExecutorFactory.create({"executor": "commandline-local"})
    assert isinstance(executor, LocalCommandLineCodeExecutor)
    assert executor.work_dir == Path("coding")  # a dedicated folder, not AutoGen's "."
    assert (tmp_path / "coding").is_dir()


def test_unknown_executor() -> None:
    with pytest.raises(ValueError, match="Unknown code executor foo"):
        CodeExecutorFactory.create({"executor": "foo"})
    with pytest.raises(ValueError, match="Unknown code executor None"):
        CodeExecutorFactory.create({})


@pytest.mark.jupyter
def test_ipython_embedded_builds_an_embedded_kernel_executor(tmp_path: Path) -> None:
    from parley.coding.jupyter import EmbeddedIPythonCodeExecutor

    executor = CodeExecutorFactory.create(
        {"executor": "ipython-embedded", "ipython-embedded": {"output_dir": tmp_path, "timeout": 9}}
    )
    try:
        assert isinstance(executor, EmbeddedIPythonCodeExecutor)
        assert executor.timeout == 9
        result = executor.execute_code_blocks([CodeBlock(code="print(6 * 7)", language="python")])
        assert (result.exit_code, result.output) == (0, "42\n")
    finally:
        executor.stop()


@pytest.mark.jupyter
def test_jupyter_local_builds_an_executor_that_owns_its_gateway(tmp_path: Path) -> None:
    from parley.coding.jupyter import JupyterCodeExecutor

    config = {
        "executor": "jupyter-local",
        "jupyter-local": {"output_dir": tmp_path, "timeout": 9, "server": {"log_file": None}},
    }
    executor = CodeExecutorFactory.create(config)
    assert isinstance(executor, JupyterCodeExecutor)
    with executor:
        assert executor.timeout == 9
        code = "import os\nprint(os.getcwd())\nprint(os.getppid())"
        result = executor.execute_code_blocks([CodeBlock(code=code, language="python")])
        cwd, gateway = result.output.split()
        assert cwd == str(tmp_path)
        assert alive(int(gateway))
    wait_until_gone(int(gateway))  # the executor's stop stopped its server


@pytest.mark.jupyter
def test_jupyter_local_with_bad_options_leaves_no_gateway(tmp_path: Path) -> None:
    before = set(processes_mentioning("-m kernel_gateway"))
    options = {"output_dir": tmp_path, "timeout": 0, "server": {"log_file": None}}
    config = {"executor": "jupyter-local", "jupyter-local": options}
    with pytest.raises(ValueError, match="Timeout must be greater than or equal to 1"):
        CodeExecutorFactory.create(config)
    wait_until_gone(*(set(processes_mentioning("-m kernel_gateway")) - before))


def test_a_missing_jupyter_extra_names_the_install_command(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "for name in ('websockets', 'jupyter_client', 'kernel_gateway'):\n"
        "    sys.modules[name] = None  # as if not installed\n"
        "from parley.coding import jupyter\n"
        "info = jupyter.JupyterConnectionInfo('127.0.0.1', False, 1)\n"
        "for make in (\n"
        "    lambda: jupyter.JupyterClient(info).get_kernel_client('k'),\n"
        "    lambda: jupyter.EmbeddedIPythonCodeExecutor(output_dir='coding'),\n"
        "    lambda: jupyter.LocalJupyterServer(log_file=None),\n"
        "):\n"
        "    try:\n"
        "        make()\n"
        "    except ImportError as error:\n"
        "        print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,  # a clean folder for output_dir='coding'; this checkout stays importable:
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 3, done.stdout + done.stderr
    assert all(line.endswith("pip install 'parley[jupyter]'") for line in lines)


def test_package_exports() -> None:
    assert sorted(parley.coding.__all__) == sorted(
        [
            "CodeBlock",
            "CodeResult",
            "CodeExtractor",
            "CodeExecutor",
            "CodeExecutorFactory",
            "MarkdownCodeExtractor",
            "LocalCommandLineCodeExecutor",
            "DockerCommandLineCodeExecutor",
            # AutoGen has these in autogen.coding.func_with_reqs only; parley has both.
            "Alias",
            "FunctionWithRequirements",
            "FunctionWithRequirementsStr",
            "ImportFromModule",
            "with_requirements",
        ]
    )
    with pytest.raises(AttributeError, match="NoSuchThing"):
        _ = parley.coding.NoSuchThing


@pytest.mark.skipif(
    importlib.util.find_spec("parley.coding.docker_commandline_code_executor") is None,
    reason="the Docker executor module is not there yet",
)
def test_docker_executor_is_reachable_lazily() -> None:
    from parley.coding.docker_commandline_code_executor import DockerCommandLineCodeExecutor

    assert parley.coding.DockerCommandLineCodeExecutor is DockerCommandLineCodeExecutor


def imported_after(statement: str) -> set[str]:
    """The top-level module names imported by ``statement`` in a fresh interpreter."""
    code = f"import sys\n{statement}\nprint(' '.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return set(done.stdout.split())


def test_imports_stay_light() -> None:
    # import parley loads neither pydantic nor docker (README), nor anything that runs code.
    after_parley = imported_after("import parley, parley.code_utils")
    heavy = {
        "pydantic",
        "docker",
        "parley.coding.base",
        "parley.coding._process",
        "parley.coding.local_commandline_code_executor",
    }
    assert not heavy & after_parley
    after_coding = imported_after("import parley.coding, parley.coding.factory")
    assert "docker" not in after_coding
    assert "parley.coding.docker_commandline_code_executor" not in after_coding
    # The Jupyter package imports without its optional dependencies until a name is used.
    after_jupyter = imported_after(
        "import parley.coding.jupyter, parley.coding.jupyter.jupyter_client"
    )
    assert not {"jupyter_client", "websockets", "zmq", "kernel_gateway"} & after_jupyter


def test_the_package_s_modules_are_reachable_as_attributes() -> None:
    code = (
        "import parley.coding\n"
        "print(parley.coding.base.CodeBlock.__name__,"
        " parley.coding.local_commandline_code_executor.LocalCommandLineCodeExecutor.__name__,"
        " parley.coding.CodeExecutorFactory.__name__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == [
        "CodeBlock",
        "LocalCommandLineCodeExecutor",
        "CodeExecutorFactory",
    ]
    assert {"base", "LocalCommandLineCodeExecutor"} <= set(dir(parley.coding))
