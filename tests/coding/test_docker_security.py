"""What only the Docker sandbox does, checked on the real engine: a memory limit over the whole
block with a clear result, no host mount but the work dir, and no container left behind however
the owning process ends. What it shares with the local executor's bubblewrap sandbox (timeouts,
no network, process limits, not root, a read-only system, files only in the work dir) is
checked on both in ``tests/security/test_sandbox_isolation.py``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from parley.coding import CodeBlock
from parley.coding.docker_commandline_code_executor import DockerCommandLineCodeExecutor

from ._docker_support import REPO, container_exists, ensure_sandbox_image, executor

pytestmark = pytest.mark.docker

CHILD_TIMEOUT = 120  # seconds for a child Python process that runs one block


def py(code: str) -> CodeBlock:
    return CodeBlock(language="python", code=code)


def sh(code: str) -> CodeBlock:
    return CodeBlock(language="sh", code=code)


def test_a_memory_hog_is_killed_with_a_clear_result(tmp_path: Path) -> None:
    with executor(tmp_path, mem_limit="128m") as ex:
        result = ex.execute_code_blocks(
            [py("print('allocating', flush=True)\nx = b'x' * 1024**3\nprint('done')")]
        )
        after = ex.execute_code_blocks([py("print('fine')")])
    assert result.exit_code == 137
    assert result.output.startswith("allocating\n")
    assert "done" not in result.output
    assert "ran out of memory" in result.output
    assert "128m" in result.output
    assert (after.exit_code, after.output) == (0, "fine\n")


def test_only_the_work_dir_is_mounted_from_the_host(tmp_path: Path) -> None:
    # Mount points other than the kernel's file systems, the root, /tmp (a tmpfs) and the three
    # files the engine writes for every container (/etc/hosts...).
    system = ("/proc", "/sys", "/dev")
    engine_files = {"/etc/hosts", "/etc/hostname", "/etc/resolv.conf"}
    with executor(tmp_path) as ex:
        result = ex.execute_code_blocks([sh("cut -d ' ' -f 5 /proc/self/mountinfo")])
    mounts = {m for m in result.output.split() if not m.startswith(system)}
    assert mounts - engine_files == {"/", "/tmp", "/workspace"}


def _child_script(name: str, then: str, auto_remove: bool = True) -> str:
    """A Python program that runs one block in a container called ``name``, then ``then``."""
    return textwrap.dedent(
        f"""\
        import os, signal, sys
        sys.path.insert(0, {str(REPO)!r})
        from parley.coding import CodeBlock
        from parley.coding.docker_commandline_code_executor import DockerCommandLineCodeExecutor
        ex = DockerCommandLineCodeExecutor(image={ensure_sandbox_image()!r},
                                           container_name={name!r}, work_dir=sys.argv[1],
                                           auto_remove={auto_remove!r})
        print(ex.execute_code_blocks([CodeBlock(language="sh", code="echo ran")]).output,
              end="", flush=True)
        {then}
        """
    )


def _run_child(script: str, work_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, str(work_dir)],
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        check=False,
    )


def test_the_container_is_removed_when_the_owning_process_exits(tmp_path: Path) -> None:
    name = f"parley-test-exit-{os.getpid()}-{time.monotonic_ns()}"
    # The child never calls stop(): it just ends, leaving the executor to the interpreter's exit.
    child = _run_child(_child_script(name, "sys.exit(0)"), tmp_path)
    assert (child.returncode, child.stdout) == (0, "ran\n"), child.stderr
    assert not container_exists(name)


def test_a_killed_owner_s_stopped_container_is_removed_by_the_next_executor(
    tmp_path: Path,
) -> None:
    # With auto_remove=False the container only stops when its owner dies (the engine does
    # not remove it): the next executor does. (With auto_remove, the engine removes it at
    # once: tests/security/test_docker_containment.py.)
    name = f"parley-test-killed-{os.getpid()}-{time.monotonic_ns()}"
    kill = "os.kill(os.getpid(), signal.SIGKILL)"
    child = _run_child(_child_script(name, kill, auto_remove=False), tmp_path)
    assert child.returncode == -signal.SIGKILL
    assert child.stdout == "ran\n", child.stderr
    assert container_exists(name)
    later = tmp_path / "later"
    later.mkdir()
    with executor(later) as ex:
        assert ex.execute_code_blocks([sh("echo next")]).output == "next\n"
    assert not container_exists(name)


def test_stop_removes_the_container_even_after_a_failing_block(tmp_path: Path) -> None:
    ex = DockerCommandLineCodeExecutor(image=ensure_sandbox_image(), work_dir=tmp_path, timeout=1)
    try:
        assert ex.execute_code_blocks([sh("sleep 30")]).exit_code == 124
        assert container_exists(ex.container_name)
    finally:
        ex.stop()
    assert not container_exists(ex.container_name)
