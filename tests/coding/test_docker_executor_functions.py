"""DockerCommandLineCodeExecutor(functions=[...]) on the real engine and the sandbox image.

The container has no network; requirements come from hand-made wheels in a local folder,
downloaded by pip on the host (never from the internet).
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pytest

from parley.coding import CodeBlock
from parley.coding.func_with_reqs import FunctionWithRequirements, with_requirements

from ._docker_support import executor
from ._wheels import TINY_MODULE, offline_pip, tiny_wheels, unreachable_index

pytestmark = pytest.mark.docker


def py(code: str) -> CodeBlock:
    return CodeBlock(language="python", code=code)


@with_requirements(global_imports=["math"])
def hypotenuse(a: float, b: float) -> float:
    return math.sqrt(a * a + b * b)


@with_requirements(python_packages=["tinypkg"], global_imports=["tinypkg"])
def quadruple(x: int) -> int:
    return tinypkg.double(tinypkg.double(x))  # type: ignore[name-defined]  # noqa: F821


def test_functions_are_importable_in_the_container(tmp_path: Path) -> None:
    repeat = FunctionWithRequirements.from_str("def repeat(s, n):\n    return s * n\n")
    with executor(tmp_path, functions=[hypotenuse, repeat], functions_module="myfuncs") as ex:
        result = ex.execute_code_blocks(
            [py("from myfuncs import hypotenuse, repeat\nprint(hypotenuse(3, 4), repeat('ab', 2))")]
        )
    assert result.exit_code == 0, result.output
    assert result.output == "5.0 abab\n"
    assert sorted(p.name for p in tmp_path.glob("*.py")) == sorted(
        ["myfuncs.py", Path(str(result.code_file)).name]
    )


def test_a_module_that_fails_to_load_in_the_container(tmp_path: Path) -> None:
    broken = with_requirements(global_imports=["not_in_the_image"])(hypotenuse.func)
    with (
        executor(tmp_path, functions=[broken]) as ex,
        pytest.raises(ValueError, match=r"^Functions failed to load: ") as failure,
    ):
        ex.execute_code_blocks([py("print(1)")])
    message = str(failure.value)
    assert message.startswith("Functions failed to load: ")
    assert "No module named 'not_in_the_image'" in message


def test_a_missing_requirement_comes_from_the_host_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    offline_pip(monkeypatch, tiny_wheels(tmp_path / "wheels"))
    # A temporary folder of the test's own: other tests (parallel workers) make package folders.
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    work = tmp_path / "work"
    probe = (
        "from functions import quadruple\nimport tinypkg\n"
        "print(quadruple(5), tinypkg.__file__)\n"
        "mounts = [line.split() for line in open('/proc/self/mountinfo')]\n"
        "print([m[5].split(',')[0] for m in mounts if m[4] == '/parley-packages'])\n"
    )
    before = set(Path(tempfile.gettempdir()).glob("parley-packages-*"))
    with executor(work, functions=[quadruple]) as ex:
        result = ex.execute_code_blocks([py(probe)])
        assert len(set(Path(tempfile.gettempdir()).glob("parley-packages-*")) - before) == 1
        assert result.exit_code == 0, result.output
        first, second = result.output.splitlines()
        assert first == "20 /parley-packages/tinypkg.py"
        assert second == "['ro']"  # mounted read-only: code cannot change the packages
        assert not list(work.rglob("tinypkg*"))  # nothing installed in the work dir
        ex.restart()  # a new container sees the same packages
        again = ex.execute_code_blocks([py("from functions import quadruple\nprint(quadruple(1))")])
        assert again.output == "4\n", again.output
    # stop() removed the host's package folder.
    assert set(Path(tempfile.gettempdir()).glob("parley-packages-*")) <= before


def test_a_requirement_the_container_has_needs_no_pip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unreachable_index(monkeypatch)  # pip would fail, were it run
    needs = with_requirements(python_packages=["tinypkg>=1"], global_imports=["tinypkg"])(
        quadruple.func
    )
    work = tmp_path / "work"
    with executor(work, functions=[needs]) as ex:
        # tinypkg installed where the container's Python finds it: the work dir (sys.path[0]).
        (work / "tinypkg.py").write_text(TINY_MODULE)
        dist_info = work / "tinypkg-1.0.dist-info"
        dist_info.mkdir()
        metadata = "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n"
        (dist_info / "METADATA").write_text(metadata)
        result = ex.execute_code_blocks(
            [py("from functions import quadruple\nprint(quadruple(2))")]
        )
    assert result.output == "8\n", result.output


def test_an_unreachable_index_is_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unreachable_index(monkeypatch)
    with (
        executor(tmp_path, functions=[quadruple]) as ex,
        pytest.raises(ValueError, match="index could not be reached") as failure,
    ):
        ex.execute_code_blocks([py("print(1)")])
    message = str(failure.value)
    assert message.startswith("Pip install failed. The package index could not be reached")
    assert "Connection refused" in message
    assert "The container runs Python 3." in message


def test_a_package_without_a_wheel_for_the_container(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "sourceonly-1.0.tar.gz").write_bytes(b"")  # a source archive only
    offline_pip(monkeypatch, wheels)
    needs = with_requirements(python_packages=["sourceonly"])(hypotenuse.func)
    with (
        executor(tmp_path / "w", functions=[needs]) as ex,
        pytest.raises(ValueError, match="could not install sourceonly") as failure,
    ):
        ex.execute_code_blocks([py("print(1)")])
    message = str(failure.value)
    assert message.startswith("Pip install failed. pip could not install sourceonly")
    assert "No matching distribution found for sourceonly" in message
    assert "must be installed in the image" in message
