"""What the Docker sandbox guarantees, checked on the real engine: timeouts kill every process
of a block, no network, limits on processes and memory, not root, a read-only system, files only
in the work dir, and no container left behind however the owning process ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from parley.coding import CodeBlock
from parley.coding.docker_commandline_code_executor import DockerCommandLineCodeExecutor

from ._docker_support import REPO, container_exists, ensure_sandbox_image, executor, processes

pytestmark = pytest.mark.docker

CLASSIC_BOMB = ":(){ :|:& };:"
CHILD_TIMEOUT = 120  # seconds for a child Python process that runs one block


def py(code: str) -> CodeBlock:
    return CodeBlock(language="python", code=code)


def sh(code: str) -> CodeBlock:
    return CodeBlock(language="sh", code=code)


def test_a_timeout_kills_every_process_of_the_block_and_the_executor_goes_on(
    tmp_path: Path,
) -> None:
    # The loop starts a child in the background and one in a new session (out of its process
    # group): neither may survive the timeout.
    code = textwrap.dedent(
        """\
        import subprocess
        subprocess.Popen(["sleep", "1001"])
        subprocess.Popen(["setsid", "sleep", "1002"])
        print("looping", flush=True)
        while True:
            pass
        """
    )
    with executor(tmp_path, timeout=2) as ex:
        start = time.monotonic()
        result = ex.execute_code_blocks([py(code)])
        elapsed = time.monotonic() - start
        left = processes(ex)
        after = ex.execute_code_blocks([py("print('still here')")])
    assert result.exit_code == 124
    assert result.output == "looping\n\nTimeout"
    assert 2 <= elapsed < 10
    assert not [p for p in left if "python" in p or "sleep 100" in p], left
    assert (after.exit_code, after.output) == (0, "still here\n")


def test_background_processes_end_with_their_block(tmp_path: Path) -> None:
    with executor(tmp_path) as ex:
        result = ex.execute_code_blocks(
            [sh("sleep 1003 &\nnohup sleep 1004 >/dev/null 2>&1 &\necho started")]
        )
        left = processes(ex)
    assert (result.exit_code, result.output) == (0, "started\n")
    assert not [p for p in left if "sleep 100" in p], left


def test_no_network_but_loopback(tmp_path: Path) -> None:
    # Only looks at the interfaces: sends nothing anywhere.
    with executor(tmp_path) as ex:
        result = ex.execute_code_blocks(
            [py("import os\nprint(sorted(os.listdir('/sys/class/net')))")]
        )
    assert (result.exit_code, result.output) == (0, "['lo']\n")


def test_a_fork_bomb_hits_the_process_limit_and_the_executor_recovers(tmp_path: Path) -> None:
    bomb = textwrap.dedent(
        """\
        import os, time
        children = 0
        try:
            while True:
                if os.fork() == 0:
                    time.sleep(1000)
                    os._exit(0)
                children += 1
        except OSError as error:
            print("stopped after", children, "children:", error.strerror, flush=True)
        """
    )
    with executor(tmp_path, timeout=10, pids_limit=64) as ex:
        limited = ex.execute_code_blocks([py(bomb)])
        # The classic one, then three seconds of a loop of builtins (a fork would fail).
        classic = ex.execute_code_blocks(
            [
                CodeBlock(
                    language="bash",
                    code=CLASSIC_BOMB + "\nwhile [ $SECONDS -lt 3 ]; do :; done\necho survived",
                )
            ]
        )
        left = processes(ex)
        after = ex.execute_code_blocks([py("print('recovered')")])
    assert limited.exit_code == 0, limited.output
    assert limited.output.startswith("stopped after ")
    assert int(limited.output.split()[2]) < 64
    assert "Resource temporarily unavailable" in limited.output
    # bash itself may give up forking (exit 254) or be stopped at the timeout (124).
    assert "fork: retry: Resource temporarily unavailable" in classic.output
    assert left == [], left  # nothing but the container's keeper
    assert (after.exit_code, after.output) == (0, "recovered\n")


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


def test_code_runs_as_non_root_without_capabilities_on_a_read_only_system(tmp_path: Path) -> None:
    with executor(tmp_path) as ex:
        who = ex.execute_code_blocks([sh("id -u; grep CapEff /proc/self/status")])
        system = ex.execute_code_blocks([sh("touch /etc/x 2>&1 || echo refused")])
        scratch = ex.execute_code_blocks([sh("echo ok > /tmp/x && cat /tmp/x")])
    uid, caps = who.output.split("\n")[:2]
    assert uid != "0"
    assert uid == ("1000" if os.geteuid() == 0 else str(os.geteuid()))
    assert caps.split() == ["CapEff:", "0000000000000000"]
    assert system.output.endswith("refused\n")
    assert "Read-only file system" in system.output
    assert scratch.output == "ok\n"


def test_files_written_by_the_code_belong_to_the_user_it_runs_as(tmp_path: Path) -> None:
    with executor(tmp_path) as ex:
        result = ex.execute_code_blocks([py("open('result.txt', 'w').write('from the sandbox')")])
    assert result.exit_code == 0, result.output
    written = tmp_path / "result.txt"
    assert written.read_text() == "from the sandbox"
    expected_uid = 1000 if os.geteuid() == 0 else os.geteuid()
    assert written.stat().st_uid == expected_uid


def test_a_file_name_outside_the_work_dir_is_refused(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with executor(work) as ex:
        result = ex.execute_code_blocks([py("# filename: ../escape.py\nprint('out')")])
        absolute = ex.execute_code_blocks([sh(f"# filename: {tmp_path}/abs.sh\necho out")])
    assert (result.exit_code, result.output, result.code_file) == (
        1,
        "Filename is not in the workspace",
        None,
    )
    assert absolute.output == "Filename is not in the workspace"
    assert not (tmp_path / "escape.py").exists()
    assert not (tmp_path / "abs.sh").exists()


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


root_only = pytest.mark.skipif(os.geteuid() != 0, reason="the ownership rules for a root parley")


@root_only
def test_a_work_dir_of_another_user_is_used_as_that_user(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    os.chown(project, 4321, 4322)
    with executor(project) as ex:
        result = ex.execute_code_blocks([sh("id -u; id -g; echo made > made.txt")])
    assert result.output == "4321\n4322\n"
    made = project / "made.txt"
    assert made.read_text() == "made\n"
    assert (made.stat().st_uid, made.stat().st_gid) == (4321, 4322)
    assert (project.stat().st_uid, project.stat().st_gid) == (4321, 4322)


@root_only
def test_a_non_empty_root_owned_work_dir_is_never_taken_over(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "data.txt").write_text("input\n")
    with executor(full) as ex:
        result = ex.execute_code_blocks([sh("cat data.txt; touch new.txt")])
    assert result.output.startswith("input\n")
    assert "Permission denied" in result.output
    assert full.stat().st_uid == 0
    assert not (full / "new.txt").exists()
    assert "is not empty: parley leaves it as it is" in caplog.text


def test_an_interrupted_block_leaves_nothing_running(tmp_path: Path) -> None:
    class Interrupted(Exception):
        pass

    def interrupt(signum: int, frame: object) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGUSR2, interrupt)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGUSR2))
    try:
        with executor(tmp_path, timeout=60) as ex:
            timer.start()
            start = time.monotonic()
            with pytest.raises(Interrupted):
                ex.execute_code_blocks([sh("sleep 1005")])
            assert time.monotonic() - start < 30
            left = processes(ex)
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR2, previous)
    assert not [p for p in left if "sleep 1005" in p], left
