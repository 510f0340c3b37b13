"""Issue 34, item 3: a FIFO (or a link, or another non-regular file) at the name a block asks
for must not hang the executor.

The reported attack: block 1 runs ``os.mkfifo('next.py')``, block 2 starts with
``# filename: next.py``. The host opened the FIFO to write the code and waited for a reader for
ever; the block's timeout did not cover writing the file. Now every host-side write of a code
file opens the name without following a link and without waiting, and refuses anything but a
regular file (``parley.coding._code_file``): the call returns at once with a failed block the
model can read. Each run here is watched by a thread with a generous bound, and a writer stuck
on a FIFO is released afterwards, so a regression fails the test instead of hanging it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from parley.code_utils import execute_code
from parley.coding import CodeBlock, LocalCommandLineCodeExecutor
from parley.coding.func_with_reqs import with_requirements
from tests.coding import _bwrap_support, _docker_support

T = TypeVar("T")

BOUND = 60.0  # seconds: far more than any of these calls needs; a hang is a failure
MAKE_FIFO = "import os\nos.mkfifo('next.py')\nprint('made a fifo')"
NEXT = "# filename: next.py\nprint('second block ran')"


def bounded(call: Callable[[], T], work_dir: Path) -> T:
    """``call()``'s result, failing the test if it does not return within :data:`BOUND` (a
    writer then stuck on a FIFO of ``work_dir`` is released, so the thread ends)."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["result"] = call()
        except BaseException as error:  # handed to the test's thread
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(BOUND)
    if thread.is_alive():
        for fifo in work_dir.rglob("*"):
            with contextlib.suppress(OSError):
                if fifo.is_fifo():
                    os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        thread.join(BOUND)
        pytest.fail(f"the executor did not return within {BOUND:g} s: it hung on a FIFO")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]  # type: ignore[no-any-return]


@contextlib.contextmanager
def executor(kind: str, work_dir: Path, **options: Any) -> Iterator[Any]:
    if kind == "local":
        with LocalCommandLineCodeExecutor(work_dir=work_dir, timeout=20, **options) as ex:
            yield ex
    elif kind == "bwrap":
        with _bwrap_support.executor(work_dir, **options) as ex:
            yield ex
    else:
        with _docker_support.executor(work_dir, **options) as ex:
            yield ex


KINDS = [
    "local",
    pytest.param("bwrap", marks=pytest.mark.bwrap),
    pytest.param("docker", marks=pytest.mark.docker),
]


def assert_refused(result: Any, what: str, name: str = "next.py") -> None:
    """A failed block saying which file is what; the first block's output kept."""
    assert result.exit_code != 0
    assert "made a fifo" in result.output
    assert f"{name} is {what}" in result.output
    assert what in result.output
    assert "not a regular file" in result.output
    assert "second block ran" not in result.output


@pytest.mark.parametrize("kind", KINDS)
def test_a_fifo_named_by_the_next_block_is_refused_at_once(kind: str, tmp_path: Path) -> None:
    work_dir = tmp_path / "work"
    with executor(kind, work_dir) as ex:
        blocks = [
            CodeBlock(language="python", code=MAKE_FIFO),
            CodeBlock(language="python", code=NEXT),
        ]
        result = bounded(lambda: ex.execute_code_blocks(blocks), work_dir)
        assert_refused(result, "a named pipe (FIFO)")
        # The executor is still usable, and the FIFO is left as it was.
        assert (work_dir / "next.py").is_fifo()
        again = bounded(
            lambda: ex.execute_code_blocks([CodeBlock(language="python", code="print(7)")]),
            work_dir,
        )
        assert again.exit_code == 0
        assert "7" in again.output


@pytest.mark.parametrize("kind", KINDS)
def test_a_link_to_a_fifo_inside_the_work_dir_is_refused(kind: str, tmp_path: Path) -> None:
    work_dir = tmp_path / "work"
    plant = "import os\nos.mkfifo('pipe')\nos.symlink('pipe', 'next.py')\nprint('made a fifo')"
    with executor(kind, work_dir) as ex:
        blocks = [CodeBlock(language="python", code=plant), CodeBlock(language="python", code=NEXT)]
        result = bounded(lambda: ex.execute_code_blocks(blocks), work_dir)
        assert_refused(result, "a named pipe (FIFO)", name="pipe")  # what the link names


@pytest.mark.parametrize("kind", KINDS)
def test_a_link_pointing_outside_the_work_dir_is_refused(kind: str, tmp_path: Path) -> None:
    """A link out (to a FIFO of the host's ``/tmp``, or anywhere) is refused too; this held
    before the fix (the name is resolved first), and must go on holding."""
    outside = tmp_path / "outside"
    outside.mkdir()
    os.mkfifo(outside / "fifo")
    work_dir = tmp_path / "work"
    plant = f"import os\nos.symlink({str(outside / 'fifo')!r}, 'next.py')\nprint('linked')"
    with executor(kind, work_dir) as ex:
        blocks = [CodeBlock(language="python", code=plant), CodeBlock(language="python", code=NEXT)]
        result = bounded(lambda: ex.execute_code_blocks(blocks), outside)
        assert result.exit_code == 1
        assert result.output == "Filename is not in the workspace"
        assert (outside / "fifo").is_fifo()


def test_a_directory_or_socket_at_the_name_is_refused(tmp_path: Path) -> None:
    import socket

    work_dir = tmp_path / "work"
    with executor("local", work_dir) as ex:
        (work_dir / "next.py").mkdir()
        result = bounded(
            lambda: ex.execute_code_blocks([CodeBlock(language="python", code=NEXT)]), work_dir
        )
        assert result.exit_code == 1
        assert "a directory, not a regular file" in result.output
        (work_dir / "next.py").rmdir()
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(work_dir / "next.py"))
            result = bounded(
                lambda: ex.execute_code_blocks([CodeBlock(language="python", code=NEXT)]), work_dir
            )
        assert result.exit_code == 1
        assert "a socket, not a regular file" in result.output


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=pytest.mark.bwrap)])
def test_legacy_execute_code_refuses_a_fifo(sandbox: bool, tmp_path: Path) -> None:
    work_dir = tmp_path / "legacy"
    work_dir.mkdir()
    options: dict[str, Any] = {"work_dir": str(work_dir), "timeout": 20}
    options.update({"sandbox": True} if sandbox else {"use_docker": False})
    first = bounded(lambda: execute_code(MAKE_FIFO, **options), work_dir)
    assert first[0] == 0
    exit_code, logs, _ = bounded(
        lambda: execute_code(NEXT, filename="next.py", **options), work_dir
    )
    assert exit_code == 1
    assert "next.py is a named pipe (FIFO), not a regular file" in logs
    # Running the file as it stands (no code given) reads it first: refused as well.
    exit_code, logs, _ = bounded(lambda: execute_code(filename="next.py", **options), work_dir)
    assert exit_code == 1
    assert "a named pipe (FIFO)" in logs


@pytest.mark.docker
def test_legacy_execute_code_in_docker_refuses_a_fifo(tmp_path: Path) -> None:
    work_dir = tmp_path / "legacy"
    work_dir.mkdir()
    os.mkfifo(work_dir / "next.py")
    image = _docker_support.ensure_sandbox_image()
    options: dict[str, Any] = {"work_dir": str(work_dir), "timeout": 20, "use_docker": image}
    exit_code, logs, _ = bounded(
        lambda: execute_code(NEXT, filename="next.py", **options), work_dir
    )
    assert exit_code == 1
    assert "a named pipe (FIFO), not a regular file" in logs
    from parley.coding.docker_commandline_code_executor import _close_legacy_executors

    _close_legacy_executors()


def test_a_fifo_at_the_functions_module_is_refused(tmp_path: Path) -> None:
    @with_requirements()
    def add(a: int, b: int) -> int:
        return a + b

    work_dir = tmp_path / "work"
    work_dir.mkdir()
    os.mkfifo(work_dir / "functions.py")
    with (
        LocalCommandLineCodeExecutor(work_dir=work_dir, timeout=20, functions=[add]) as ex,
        pytest.raises(ValueError, match=r"could not write functions\.py.*named pipe"),
    ):
        bounded(
            lambda: ex.execute_code_blocks([CodeBlock(language="python", code="print(1)")]),
            work_dir,
        )


@pytest.mark.parametrize("kind", KINDS)
def test_a_link_loop_at_the_name_is_a_failed_block(kind: str, tmp_path: Path) -> None:
    """A link to itself: a failed block the model reads, not an exception ending the chat."""
    work_dir = tmp_path / "work"
    plant = "import os\nos.symlink('next.py', 'next.py')\nprint('made a fifo')"
    with executor(kind, work_dir) as ex:
        blocks = [CodeBlock(language="python", code=plant), CodeBlock(language="python", code=NEXT)]
        result = bounded(lambda: ex.execute_code_blocks(blocks), work_dir)
        assert_refused(result, "a symbolic link")
