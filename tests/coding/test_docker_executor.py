"""DockerCommandLineCodeExecutor and run_code_in_docker on the real engine: what users see.

Every test here runs code in a real container of the sandbox image (see ``_docker_support``).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import pytest

from parley._core import runtime as _cancel
from parley._core.runtime import CancelToken
from parley.coding import CodeBlock
from parley.coding.base import CommandLineCodeResult
from parley.coding.docker_commandline_code_executor import (
    DockerCommandLineCodeExecutor,
    _close_legacy_executors,
    run_code_in_docker,
)
from parley.exceptions import ExecutionCancelledError

from ._docker_support import (
    container_exists,
    docker_client,
    ensure_sandbox_image,
    executor,
    processes,
    wait_for,
)

pytestmark = pytest.mark.docker

T = TypeVar("T")


def py(code: str) -> CodeBlock:
    return CodeBlock(language="python", code=code)


def sh(code: str) -> CodeBlock:
    return CodeBlock(language="sh", code=code)


def test_python_and_shell_blocks_run_in_order(tmp_path: Path) -> None:
    with executor(tmp_path) as ex:
        result = ex.execute_code_blocks([py("print('hi')"), sh("echo there")])
    assert isinstance(result, CommandLineCodeResult)
    assert result.exit_code == 0
    assert result.output == "hi\nthere\n"
    assert result.code_file is not None
    assert Path(result.code_file).parent == tmp_path
    assert Path(result.code_file).read_text() == "print('hi')"


def test_a_file_the_code_writes_is_on_the_host_and_readable(tmp_path: Path) -> None:
    with executor(tmp_path) as ex:
        result = ex.execute_code_blocks(
            [
                py(
                    "import os\nos.makedirs('out', exist_ok=True)\nopen('out/data.txt', 'w').write('42')"
                )
            ]
        )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "data.txt").read_text() == "42"


def test_filename_comment_names_the_file_and_may_use_a_sub_directory(tmp_path: Path) -> None:
    with executor(tmp_path) as ex:
        result = ex.execute_code_blocks([py("# filename: pkg/hello.py\nprint('named')")])
    assert result.exit_code == 0, result.output
    assert result.output == "named\n"
    assert result.code_file == str(tmp_path / "pkg" / "hello.py")
    assert (tmp_path / "pkg" / "hello.py").read_text().startswith("# filename: pkg/hello.py")


def test_an_error_gives_its_exit_code_and_the_output_in_order(tmp_path: Path) -> None:
    code = "import sys\nprint('before', flush=True)\nprint('warn', file=sys.stderr)\n1/0"
    with executor(tmp_path) as ex:
        result = ex.execute_code_blocks([py(code)])
        exited = ex.execute_code_blocks([sh("echo out; echo err >&2; exit 3")])
    assert result.exit_code == 1
    assert result.output.index("before") < result.output.index("warn")
    assert result.output.index("warn") < result.output.index("Traceback")
    assert "ZeroDivisionError: division by zero" in result.output
    assert exited.exit_code == 3
    assert exited.output == "out\nerr\n"


def test_languages_the_container_runs_saves_or_does_not_know(tmp_path: Path) -> None:
    # The rules every executor shares are in test_block_loop; these are the Docker executor's.
    with executor(tmp_path) as ex:
        pwsh = ex.execute_code_blocks([CodeBlock(language="pwsh", code="Write-Output 1")])
        saved = ex.execute_code_blocks([CodeBlock(language="js", code="console.log(1)")])
        alias = ex.execute_code_blocks([CodeBlock(language="py", code="print('alias')")])
    assert pwsh.exit_code == 1
    assert pwsh.output == "\nunknown language pwsh: it can be saved but not executed"
    assert saved.exit_code == 0
    saved_file = Path(saved.output.removeprefix("Code saved to ").strip())
    assert (saved_file.suffix, saved_file.read_text()) == (".javascript", "console.log(1)")
    assert (alias.exit_code, alias.output) == (0, "alias\n")


def test_the_container_is_created_lazily_and_removed_by_the_context_manager(
    tmp_path: Path,
) -> None:
    image = ensure_sandbox_image()
    with DockerCommandLineCodeExecutor(image=image, work_dir=tmp_path) as ex:
        name = ex.container_name
        assert not container_exists(name)  # building the executor needs no container
        assert ex.execute_code_blocks([py("print(1)")]).output == "1\n"
        assert container_exists(name)
    assert not container_exists(name)


def test_construction_needs_no_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    ex = DockerCommandLineCodeExecutor(work_dir=tmp_path / "work")  # no error here
    with pytest.raises(RuntimeError) as error:
        ex.execute_code_blocks([py("print(1)")])
    message = str(error.value)
    assert "Docker engine is not reachable" in message
    assert "Start Docker" in message
    assert "use_docker" in message
    assert "AUTOGEN_USE_DOCKER" in message
    ex.stop()


def test_a_missing_image_that_cannot_be_pulled_says_how_to_build_one(tmp_path: Path) -> None:
    # A registry on a closed loopback port: the pull fails at once, without leaving the machine.
    ex = DockerCommandLineCodeExecutor(image="localhost:1/parley-missing:latest", work_dir=tmp_path)
    with pytest.raises(RuntimeError) as error:
        ex.execute_code_blocks([py("print(1)")])
    ex.stop()
    assert "parley sandbox build" in str(error.value)
    assert "parley sandbox status" in str(error.value)
    assert "parley-sandbox:latest" in str(error.value)
    assert not container_exists(ex.container_name)


def test_the_default_image_comes_from_parley_sandbox_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARLEY_SANDBOX_IMAGE", ensure_sandbox_image())
    with DockerCommandLineCodeExecutor(work_dir=tmp_path) as ex:
        assert ex.execute_code_blocks([py("print('default')")]).output == "default\n"
        assert ex.image == ensure_sandbox_image()


def test_restart_gives_a_fresh_container_and_keeps_the_work_dir(tmp_path: Path) -> None:
    with executor(tmp_path) as ex:
        ex.execute_code_blocks([sh("echo state > /tmp/state; echo kept > kept.txt")])
        before = ex.execute_code_blocks([sh("cat /tmp/state")])
        ex.restart()
        after = ex.execute_code_blocks([sh("cat /tmp/state; cat kept.txt")])
        assert container_exists(ex.container_name)
    assert before.output == "state\n"
    assert "No such file or directory" in after.output
    assert after.output.endswith("kept\n")


def test_stop_removes_the_container_and_a_later_block_starts_a_new_one(tmp_path: Path) -> None:
    with executor(tmp_path) as ex:
        ex.execute_code_blocks([py("print(1)")])
        ex.stop()
        assert not container_exists(ex.container_name)
        assert ex.execute_code_blocks([py("print(2)")]).output == "2\n"
    assert not container_exists(ex.container_name)


def test_the_container_is_reused_between_blocks(tmp_path: Path) -> None:
    with executor(tmp_path) as ex:
        ex.execute_code_blocks([sh("echo x > /tmp/marker")])
        # The marker proves the reuse: a new container would not have it.
        result = ex.execute_code_blocks([sh("cat /tmp/marker")])
        assert result.output == "x\n"
        # Between blocks nothing runs but the container's keeper (PID 1, left out here).
        assert processes(ex) == []


def docker_top(ex: DockerCommandLineCodeExecutor) -> list[str]:
    """The command lines of the processes in the executor's container, asked of the engine
    (no block runs for it: this works while another block holds the executor)."""
    import docker

    with docker_client() as client:
        try:
            top = client.api.top(ex.container_name)
        except docker.errors.APIError:  # not there, or not running yet
            return []
    column = top["Titles"].index("CMD")
    return [row[column] for row in top["Processes"] or []]


def _under(token: CancelToken, call: Callable[[], T]) -> T:
    """``call()`` as if run by a ``run_in_thread`` whose token is ``token``."""
    context = contextvars.copy_context()
    context.run(_cancel._current.set, token)
    return context.run(call)


def test_a_cancelled_call_stops_its_block_or_its_wait_and_raises(tmp_path: Path) -> None:
    running, waiting = CancelToken(), CancelToken()
    # The pool outside: on a failure the executor's stop ends the block the pool then waits for.
    with ThreadPoolExecutor(2) as pool, executor(tmp_path, timeout=60) as ex:
        try:
            long = pool.submit(_under, running, lambda: ex.execute_code_blocks([sh("sleep 1006")]))
            assert wait_for(lambda: "sleep 1006" in "".join(docker_top(ex)), 30)
            # One block at a time: this one waits for the long one's turn to end.
            queued = pool.submit(
                _under, waiting, lambda: ex.execute_code_blocks([sh("echo no > no")])
            )
            time.sleep(0.2)
            start = time.monotonic()
            waiting.cancel()
            with pytest.raises(ExecutionCancelledError):
                queued.result(timeout=10)
            gave_up = time.monotonic() - start
            assert not long.done()
            start = time.monotonic()
            running.cancel()
            with pytest.raises(ExecutionCancelledError):
                long.result(timeout=10)
            stopped = time.monotonic() - start
        finally:
            running.cancel()
            waiting.cancel()
        left = processes(ex)
        after = ex.execute_code_blocks([sh("echo after")])
    # Not cancelled, each would wait on the 1006 s block (and fail its 10 s result() first).
    assert gave_up < 8
    assert stopped < 8
    assert not [p for p in left if "sleep 1006" in p], left
    assert (after.exit_code, after.output) == (0, "after\n")
    assert not (tmp_path / "no").exists()


def test_run_code_in_docker_reuses_one_container_per_work_dir(tmp_path: Path) -> None:
    image = ensure_sandbox_image()
    try:
        first = run_code_in_docker(
            code="print('hi')", lang="python", filename="a.py", work_dir=str(tmp_path),
            timeout=20, image=image,
        )  # fmt: skip
        second = run_code_in_docker(
            code="echo $(cat /tmp/seen 2>/dev/null) again; echo 1 > /tmp/seen", lang="sh",
            filename="b.sh", work_dir=str(tmp_path), timeout=20, image=image,
        )  # fmt: skip
        third = run_code_in_docker(
            code="cat /tmp/seen", lang="sh", filename="c.sh", work_dir=str(tmp_path),
            timeout=20, image=[image],
        )  # fmt: skip
        failed = run_code_in_docker(
            code="import sys; print('x'); sys.exit(3)", lang="python", filename="d.py",
            work_dir=str(tmp_path), timeout=20, image=image,
        )  # fmt: skip
        slow = run_code_in_docker(
            code="import time; print('zz', flush=True); time.sleep(60)", lang="python",
            filename="e.py", work_dir=str(tmp_path), timeout=1, image=image,
        )  # fmt: skip
    finally:
        _close_legacy_executors()
    assert first == (0, "hi\n", image)
    assert second == (0, "again\n", image)
    assert third == (0, "1\n", image)  # the same container: /tmp/seen is still there
    assert failed == (3, "x\n", image)
    assert slow == (1, "zz\nTimeout", image)
    assert (tmp_path / "a.py").read_text() == "print('hi')"


def test_run_code_in_docker_true_prefers_parley_sandbox_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = ensure_sandbox_image()
    monkeypatch.setenv("PARLEY_SANDBOX_IMAGE", image)
    try:
        result = run_code_in_docker(
            code="print('t')", lang="python", filename="t.py", work_dir=str(tmp_path),
            timeout=20, image=True,
        )  # fmt: skip
        escaped = run_code_in_docker(
            code="print('t')", lang="python", filename="../out.py", work_dir=str(tmp_path),
            timeout=20, image=True,
        )  # fmt: skip
    finally:
        _close_legacy_executors()
    assert result == (0, "t\n", image)
    assert escaped == (1, "Filename is not in the workspace", None)
    assert not (tmp_path.parent / "out.py").exists()


def test_execute_code_with_use_docker_runs_in_the_sandbox(tmp_path: Path) -> None:
    from parley.code_utils import execute_code

    image = ensure_sandbox_image()
    try:
        exit_code, logs, used = execute_code(
            "import os; print(os.getuid() != 0, os.listdir('/sys/class/net'))",
            work_dir=str(tmp_path),
            use_docker=image,
        )
    finally:
        _close_legacy_executors()
    assert (exit_code, logs, used) == (0, "True ['lo']\n", image)


def test_auto_remove_false_makes_stop_keep_the_stopped_container(tmp_path: Path) -> None:
    ex = DockerCommandLineCodeExecutor(
        image=ensure_sandbox_image(), work_dir=tmp_path, auto_remove=False
    )
    try:
        assert ex.execute_code_blocks([py("print(1)")]).exit_code == 0
        ex.stop()
        with docker_client() as client:
            assert client.containers.get(ex.container_name).status == "exited"
    finally:
        with docker_client() as client:
            client.containers.get(ex.container_name).remove(force=True)
