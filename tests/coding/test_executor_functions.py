"""LocalCommandLineCodeExecutor(functions=[...]): what code can import, and the setup's errors.

Everything runs for real: code in a child process, pip installing hand-made wheels from a
local folder (never the internet), real virtualenvs.
"""

from __future__ import annotations

import importlib.util
import math
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from parley.code_utils import create_virtual_env
from parley.coding import CodeBlock, LocalCommandLineCodeExecutor
from parley.coding.func_with_reqs import (
    FunctionWithRequirements,
    ImportFromModule,
    with_requirements,
)

from ._wheels import offline_pip, tiny_wheels, unreachable_index


def py(code: str) -> CodeBlock:
    return CodeBlock(language="python", code=code)


@with_requirements(global_imports=["math"])
def hypotenuse(a: float, b: float) -> float:
    """The long side of a right triangle."""
    return math.sqrt(a * a + b * b)


def add(a: int, b: int) -> int:
    return a + b


REPEAT = "def repeat(s: str, n: int) -> str:\n    return s * n\n"

USES_TINYPKG = "from functions import quadruple\nprint(quadruple(5))"


@with_requirements(python_packages=["tinypkg"], global_imports=["tinypkg"])
def quadruple(x: int) -> int:
    return tinypkg.double(tinypkg.double(x))  # type: ignore[name-defined]  # noqa: F821


@pytest.fixture
def wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """pip finds tinypkg 1.0 in a local folder, and nothing else anywhere."""
    folder = tiny_wheels(tmp_path / "wheels")
    offline_pip(monkeypatch, folder)
    return folder


def test_three_kinds_of_function_are_importable(tmp_path: Path) -> None:
    """AutoGen's documented example: decorated with imports, plain, from a string."""
    functions = [hypotenuse, add, FunctionWithRequirements.from_str(REPEAT)]
    work = tmp_path / "work"
    executor = LocalCommandLineCodeExecutor(
        work_dir=work, functions=functions, functions_module="myfuncs"
    )
    assert not (work / "myfuncs.py").exists()  # set up at the first call, not before
    result = executor.execute_code_blocks(
        [
            py(
                "from myfuncs import hypotenuse, add, repeat\nprint(hypotenuse(3, 4), add(1, 1), repeat('ab', 2))"
            )
        ]
    )
    assert result.exit_code == 0, result.output
    assert result.output == "5.0 2 abab\n"
    assert (work / "myfuncs.py").read_text().startswith("import math\n\ndef hypotenuse(")
    # One code file: the load check left no tmp_code_*.py copy of the module (AutoGen did).
    assert sorted(p.name for p in work.glob("*.py")) == sorted(
        ["myfuncs.py", Path(str(result.code_file)).name]
    )
    assert executor.functions == functions
    assert executor.functions_module == "myfuncs"


def test_the_prompt_describes_the_functions(tmp_path: Path) -> None:
    executor = LocalCommandLineCodeExecutor(
        work_dir=tmp_path, functions=[hypotenuse, add], functions_module="myfuncs"
    )
    prompt = executor.format_functions_for_prompt()
    assert "`from myfuncs import foo`" in prompt
    assert prompt.endswith(
        "def hypotenuse(a: float, b: float) -> float:\n"
        '    """The long side of a right triangle."""\n'
        "    ...\n\n"
        "def add(a: int, b: int) -> int:\n"
        "    ..."
    )
    assert executor.format_functions_for_prompt("M=$module_name") == "M=myfuncs"
    with pytest.raises(KeyError):
        executor.format_functions_for_prompt("$unknown")


@pytest.mark.parametrize("name", ["my-mod", "class", ""])
def test_the_module_name_must_be_an_identifier(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match=r"^Module name must be a valid Python identifier$"):
        LocalCommandLineCodeExecutor(work_dir=tmp_path / "w", functions_module=name)
    assert not (tmp_path / "w").exists()


def test_a_function_without_source_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="from_str"):
        LocalCommandLineCodeExecutor(
            work_dir=tmp_path, functions=[eval(compile("lambda: 1", "<x>", "eval"))]
        )


def test_a_module_that_fails_to_load_is_reported_and_retried(tmp_path: Path) -> None:
    needs_helper = with_requirements(global_imports=["helper"])(add)
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path, functions=[needs_helper])
    marker = py("print('ran')")
    with pytest.raises(
        ValueError, match=r"(?s)^Functions failed to load: .*No module named 'helper'"
    ):
        executor.execute_code_blocks([marker])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["functions.py"]  # nothing ran
    (tmp_path / "helper.py").write_text("")
    result = executor.execute_code_blocks([py("from functions import add\nprint(add(2, 3))")])
    assert result.output == "5\n"


def test_a_requirement_is_installed_outside_parley_and_the_work_dir(
    tmp_path: Path, wheels: Path
) -> None:
    work = tmp_path / "work"
    with LocalCommandLineCodeExecutor(work_dir=work, functions=[quadruple]) as executor:
        result = executor.execute_code_blocks(
            [py(USES_TINYPKG + "\nimport tinypkg\nprint(tinypkg.__file__)")]
        )
        assert result.exit_code == 0, result.output
        twenty, location = result.output.splitlines()
        assert twenty == "20"
        folder = Path(location).parent
        assert folder.name.startswith("parley-packages-")
        assert not folder.is_relative_to(work)
    assert not folder.exists()  # stop() removed it
    # parley's own environment did not get the package.
    assert importlib.util.find_spec("tinypkg") is None
    # Used again after stop(): set up again, installed again.
    result = executor.execute_code_blocks([py(USES_TINYPKG)])
    assert result.output == "20\n"
    executor.stop()


def test_requirements_of_string_functions_are_installed(tmp_path: Path, wheels: Path) -> None:
    # AutoGen never installed these.
    source = "def triple(x: int) -> int:\n    import tinypkg\n    return tinypkg.double(x) + x\n"
    func = FunctionWithRequirements.from_str(source, python_packages=["tinypkg"])
    with LocalCommandLineCodeExecutor(work_dir=tmp_path / "w", functions=[func]) as executor:
        result = executor.execute_code_blocks(
            [py("from functions import triple\nprint(triple(3))")]
        )
    assert result.output == "9\n", result.output


def test_a_satisfied_requirement_needs_no_pip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unreachable_index(monkeypatch)  # pip would fail, were it run
    needs = with_requirements(
        python_packages=["packaging>=22", "no-such-thing; python_version < '3'"],
        global_imports=[ImportFromModule("packaging.version", ["Version"])],
    )(add)
    with LocalCommandLineCodeExecutor(work_dir=tmp_path, functions=[needs]) as executor:
        result = executor.execute_code_blocks([py("from functions import add\nprint(add(1, 2))")])
    assert result.output == "3\n", result.output


def test_a_requirement_pip_cannot_find_fails_with_pips_words(tmp_path: Path, wheels: Path) -> None:
    needs = with_requirements(python_packages=["tinypkg==9.9"])(add)
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path, functions=[needs])
    with pytest.raises(ValueError, match=r"^Pip install failed\. ") as failure:
        executor.execute_code_blocks([py("print(1)")])
    message = str(failure.value)
    assert "tinypkg==9.9" in message
    assert "ERROR: No matching distribution found for tinypkg==9.9" in message
    executor.stop()


def test_an_unreachable_index_is_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unreachable_index(monkeypatch)
    needs = with_requirements(python_packages=["tinypkg"])(add)
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path, functions=[needs])
    started = time.monotonic()
    with pytest.raises(
        ValueError, match=r"^Pip install failed\. The package index could not be reached"
    ) as failure:
        executor.execute_code_blocks([py("print(1)")])
    assert time.monotonic() - started < 30  # pip gives up at once (--retries 0)
    message = str(failure.value)
    assert "Connection refused" in message
    assert "PIP_INDEX_URL" in message
    assert "PIP_FIND_LINKS" in message
    executor.stop()


@pytest.fixture
def silent_index(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """pip's index accepts connections and never answers."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{server.getsockname()[1]}/simple")
        for name in ("PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "PIP_FIND_LINKS"):
            monkeypatch.delenv(name, raising=False)
        yield


def test_pip_running_past_the_timeout_is_stopped(tmp_path: Path, silent_index: None) -> None:
    needs = with_requirements(python_packages=["tinypkg"])(add)
    executor = LocalCommandLineCodeExecutor(timeout=2, work_dir=tmp_path, functions=[needs])
    started = time.monotonic()
    with pytest.raises(ValueError, match=r"^Pip install timed out after 2 s installing tinypkg"):
        executor.execute_code_blocks([py("print(1)")])
    assert time.monotonic() - started < 15
    executor.stop()


@pytest.mark.slow
def test_a_virtualenv_with_a_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wheels: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    context = create_virtual_env(os.path.join("rel", "venv"))
    assert context.env_dir == os.path.join("rel", "venv")  # as given, like AutoGen's
    executor = LocalCommandLineCodeExecutor(
        work_dir="work", virtual_env_context=context, functions=[quadruple]
    )
    result = executor.execute_code_blocks(
        [py(USES_TINYPKG + "\nimport sys, tinypkg\nprint(sys.prefix)\nprint(tinypkg.__file__)")]
    )
    assert result.exit_code == 0, result.output
    twenty, prefix, location = result.output.splitlines()
    venv = tmp_path / "rel" / "venv"
    assert twenty == "20"
    assert Path(prefix).resolve() == venv.resolve()  # the venv's python ran the code
    assert Path(location).resolve().is_relative_to(venv.resolve())  # pip installed into it
    executor.stop()


def test_a_virtualenv_without_pip_is_explained(tmp_path: Path, wheels: Path) -> None:
    context = create_virtual_env(str(tmp_path / "bare"), with_pip=False)
    executor = LocalCommandLineCodeExecutor(
        work_dir=tmp_path / "w", virtual_env_context=context, functions=[quadruple]
    )
    with pytest.raises(ValueError, match=r"^Pip install failed\. .* has no pip .*ensurepip"):
        executor.execute_code_blocks([py("print(1)")])


@pytest.mark.bwrap
def test_requirements_reach_code_in_the_bubblewrap_sandbox(tmp_path: Path, wheels: Path) -> None:
    # The package folder is outside the work dir: the sandbox shows it read-only to the code's
    # user (not root), and forgets it once stop() has removed it.
    work = tmp_path / "work"
    with LocalCommandLineCodeExecutor(work_dir=work, functions=[quadruple], sandbox=True) as ex:
        result = ex.execute_code_blocks([py(USES_TINYPKG)])
        assert (result.exit_code, result.output) == (0, "20\n"), result.output
    assert ex.execute_code_blocks([py("print('ok')")]).exit_code == 0
    assert ex.execute_code_blocks([py(USES_TINYPKG)]).output == "20\n"
    ex.stop()
