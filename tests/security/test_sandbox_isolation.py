"""What both sandboxes guarantee, each checked on the real thing: the Docker executor's container
(``@pytest.mark.docker``) and the local executor's bubblewrap sandbox (``sandbox=True``,
``@pytest.mark.bwrap``). Timeouts kill every process of a block, no network, a process limit a
fork bomb stops at, not root and without capabilities, a read-only system, files only in the
work dir and owned by the code's user, the ownership rules of a root parley, and nothing left
running after an interrupt.

What only one of them does lives with it: ``tests/coding/test_docker_security.py`` (the
container's lifetime, its memory limit, its mounts) and ``test_bwrap_sandbox.py`` (what the
local sandbox hides of the host).
"""

from __future__ import annotations

import os
import signal
import textwrap
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from parley.coding import CodeBlock
from parley.coding._bwrap import PROCESS_LIMIT
from tests.coding import _bwrap_support, _docker_support

DOCKER_PIDS_LIMIT = 64  # lower than the default, so that the fork bomb ends sooner
# The fork bomb's uid when the tests run as root. bubblewrap's limit (RLIMIT_NPROC) then counts
# every process of the block's uid on the machine: a bomb as the usual 1000 would leave no room
# for the blocks other tests (parallel workers) run as 1000 at the same time.
BOMB_UID = 4444


@dataclass(frozen=True)
class Sandbox:
    """One kind of sandbox, as the checks below use it."""

    executor: Callable[..., AbstractContextManager[Any]]
    """``executor(work_dir, **options)``: a context giving a started executor."""
    leftovers: Callable[[Any], list[str]]
    """The command lines of what the executor's blocks left running."""
    limited: dict[str, Any]
    """The options that set the process limit to ``process_limit``."""
    process_limit: int


SANDBOXES = {
    "docker": Sandbox(
        executor=_docker_support.executor,
        leftovers=_docker_support.processes,
        limited={"pids_limit": DOCKER_PIDS_LIMIT},
        process_limit=DOCKER_PIDS_LIMIT,
    ),
    "bwrap": Sandbox(
        executor=_bwrap_support.executor,
        leftovers=lambda ex: _bwrap_support.processes_in(ex.work_dir),
        limited={},
        process_limit=PROCESS_LIMIT,
    ),
}


@pytest.fixture(
    params=[
        pytest.param("docker", marks=pytest.mark.docker),
        pytest.param("bwrap", marks=pytest.mark.bwrap),
    ]
)
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    return SANDBOXES[request.param]


def py(code: str) -> CodeBlock:
    return CodeBlock(language="python", code=code)


def sh(code: str) -> CodeBlock:
    return CodeBlock(language="sh", code=code)


def test_a_timeout_kills_every_process_of_the_block_and_the_executor_goes_on(
    sandbox: Sandbox, tmp_path: Path
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
    with sandbox.executor(tmp_path, timeout=2) as ex:
        start = time.monotonic()
        result = ex.execute_code_blocks([py(code)])
        elapsed = time.monotonic() - start
        left = sandbox.leftovers(ex)
        after = ex.execute_code_blocks([py("print('still here')")])
    assert result.exit_code == 124
    assert result.output == "looping\n\nTimeout"
    assert 2 <= elapsed < 50  # stopped at its 2 s deadline; the block loops forever
    assert not [p for p in left if "python" in p or "sleep 100" in p], left
    assert (after.exit_code, after.output) == (0, "still here\n")


def test_background_processes_end_with_their_block(sandbox: Sandbox, tmp_path: Path) -> None:
    with sandbox.executor(tmp_path) as ex:
        result = ex.execute_code_blocks(
            [sh("sleep 1003 &\nnohup sleep 1004 >/dev/null 2>&1 &\necho started")]
        )
        left = sandbox.leftovers(ex)
    assert (result.exit_code, result.output) == (0, "started\n")
    assert not [p for p in left if "sleep 100" in p], left


def test_no_network_but_a_loopback_of_its_own(
    sandbox: Sandbox, tmp_path: Path, host_server: int
) -> None:
    code = textwrap.dedent(
        f"""\
        import socket
        print([name for _, name in socket.if_nameindex()])
        try:
            socket.create_connection(("127.0.0.1", {host_server}), timeout=5).close()
            print("reached the host")
        except OSError as error:
            print("refused:", type(error).__name__)
        """
    )
    with sandbox.executor(tmp_path) as ex:
        result = ex.execute_code_blocks([py(code)])
    assert (result.exit_code, result.output) == (0, "['lo']\nrefused: ConnectionRefusedError\n")


def test_a_fork_bomb_hits_the_process_limit_and_the_executor_recovers(
    sandbox: Sandbox, tmp_path: Path
) -> None:
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
    if os.geteuid() == 0:
        os.chown(tmp_path, BOMB_UID, BOMB_UID)  # the code runs as the work dir's owner
    with sandbox.executor(tmp_path, timeout=10, **sandbox.limited) as ex:
        limited = ex.execute_code_blocks([py(bomb)])
        # The classic one (under another name: the local executor refuses the classic
        # spelling), then three seconds of a loop of builtins (a fork would fail).
        classic = ex.execute_code_blocks(
            [
                CodeBlock(
                    language="bash",
                    code="bomb(){ bomb|bomb& }; bomb\n"
                    "while [ $SECONDS -lt 3 ]; do :; done\necho survived",
                )
            ]
        )
        left = sandbox.leftovers(ex)
        after = ex.execute_code_blocks([py("print('recovered')")])
    assert limited.exit_code == 0, limited.output
    assert limited.output.startswith("stopped after ")
    assert int(limited.output.split()[2]) < sandbox.process_limit
    assert "Resource temporarily unavailable" in limited.output
    # bash itself may give up forking (exit 254) or be stopped at the timeout (124).
    assert "fork: retry: Resource temporarily unavailable" in classic.output
    assert left == [], left
    assert (after.exit_code, after.output) == (0, "recovered\n")


def test_code_runs_as_non_root_without_capabilities_on_a_read_only_system(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    with sandbox.executor(tmp_path) as ex:
        who = ex.execute_code_blocks([sh("id -u; grep CapEff /proc/self/status")])
        system = ex.execute_code_blocks([sh("touch /etc/x 2>&1 || echo refused")])
        # A fresh name: folders the sandbox shows at their own paths (the interpreter's venv,
        # which may live in /tmp) can make any fixed /tmp name exist already.
        scratch = ex.execute_code_blocks([sh("f=/tmp/scratch-$$; echo ok > $f && cat $f")])
    uid, caps = who.output.split("\n")[:2]
    assert uid != "0"
    assert uid == ("1000" if os.geteuid() == 0 else str(os.geteuid()))
    assert caps.split() == ["CapEff:", "0000000000000000"]
    assert system.output.endswith("refused\n")
    assert "Read-only file system" in system.output
    assert scratch.output == "ok\n"


def test_files_written_by_the_code_belong_to_the_user_it_runs_as(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    with sandbox.executor(tmp_path) as ex:
        result = ex.execute_code_blocks([py("open('result.txt', 'w').write('from the sandbox')")])
    assert result.exit_code == 0, result.output
    written = tmp_path / "result.txt"
    assert written.read_text() == "from the sandbox"
    expected_uid = 1000 if os.geteuid() == 0 else os.geteuid()
    assert written.stat().st_uid == expected_uid


def test_a_file_name_outside_the_work_dir_is_refused(sandbox: Sandbox, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with sandbox.executor(work) as ex:
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


root_only = pytest.mark.skipif(os.geteuid() != 0, reason="the ownership rules for a root parley")


@root_only
def test_a_work_dir_of_another_user_is_used_as_that_user(sandbox: Sandbox, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    os.chown(project, 4321, 4322)
    with sandbox.executor(project) as ex:
        result = ex.execute_code_blocks([sh("id -u; id -g; echo made > made.txt")])
    assert result.output == "4321\n4322\n"
    made = project / "made.txt"
    assert made.read_text() == "made\n"
    assert (made.stat().st_uid, made.stat().st_gid) == (4321, 4322)
    assert (project.stat().st_uid, project.stat().st_gid) == (4321, 4322)


@root_only
def test_a_non_empty_root_owned_work_dir_is_never_taken_over(
    sandbox: Sandbox, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "data.txt").write_text("input\n")
    with sandbox.executor(full) as ex:
        result = ex.execute_code_blocks([sh("cat data.txt; touch new.txt")])
    # The local executor puts stderr first, as AutoGen's; Docker's one stream keeps the order.
    assert "input" in result.output.splitlines()
    assert "Permission denied" in result.output
    assert full.stat().st_uid == 0
    assert not (full / "new.txt").exists()
    assert "is not empty: parley leaves it as it is" in caplog.text


def test_an_interrupted_block_leaves_nothing_running(sandbox: Sandbox, tmp_path: Path) -> None:
    class Interrupted(Exception):
        pass

    def interrupt(signum: int, frame: object) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGUSR2, interrupt)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGUSR2))
    try:
        with sandbox.executor(tmp_path, timeout=60) as ex:
            timer.start()
            start = time.monotonic()
            with pytest.raises(Interrupted):
                ex.execute_code_blocks([sh("sleep 1005")])
            assert time.monotonic() - start < 30
            left = sandbox.leftovers(ex)
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR2, previous)
    assert not [p for p in left if "sleep 1005" in p], left
