"""What local code execution guarantees: contained processes, files inside the work dir, no
inherited secrets, bounded output, timeouts from any thread (``parley.coding._process`` and
the executors built on it)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from parley.code_utils import execute_code
from parley.coding import CodeBlock, LocalCommandLineCodeExecutor
from parley.coding._process import MAX_OUTPUT_BYTES, ProcessResult, run, safe_env
from tests.coding._processes import alive

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

SETTLE_SECONDS = 10.0  # a SIGKILLed process may take a moment to disappear (polled)
# The bound on a block stopped at its 1 s deadline: the blocks here run 60 s, 1000 s or forever
# unless stopped, so this still tells a kill at the deadline from none, whatever the load.
STOPPED_WITHIN = 30.0

# Writes its process group and its child's pid, then spins; the child sleeps with its output
# sent elsewhere, so only the process-group kill can reach it.
SPAWN_AND_LOOP = """\
import os, subprocess, sys
child = subprocess.Popen(["sleep", "1000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
with open(sys.argv[1] if len(sys.argv) > 1 else "pids.txt", "w") as f:
    f.write(f"{os.getpgrp()} {child.pid}")
print("spinning", flush=True)
while True:
    pass
"""

# In sh: write the shell's process group (field 5 of /proc/$$/stat) and the last job's pid.
WRITE_PIDS = """echo "$(cut -d ' ' -f5 /proc/$$/stat) $!" > pids.txt"""


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes whose process group is ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # exited while we looked
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def assert_all_gone(pgid: int, *pids: int) -> None:
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        if not group_members(pgid) and not any(alive(pid) for pid in pids):
            return
        time.sleep(0.05)
    raise AssertionError(
        f"still alive: group {group_members(pgid)}, pids {[p for p in pids if alive(p)]}"
    )


def read_pids(path: Path) -> tuple[int, int]:
    pgid, child = path.read_text().split()
    return int(pgid), int(child)


# -- timeouts kill everything -------------------------------------------------------------------


def test_executor_timeout_kills_the_loop_and_its_children(tmp_path: Path) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path, timeout=1)
    start = time.monotonic()
    result = executor.execute_code_blocks([CodeBlock(code=SPAWN_AND_LOOP, language="python")])
    elapsed = time.monotonic() - start
    assert result.exit_code == 124
    assert result.output == "spinning\n\nTimeout"
    assert elapsed < STOPPED_WITHIN
    pgid, child = read_pids(tmp_path / "pids.txt")
    assert pgid != os.getpgrp()  # the block had its own group
    assert_all_gone(pgid, child)


def test_shell_background_job_is_killed_at_the_timeout(tmp_path: Path) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path, timeout=1)
    code = f"sleep 1000 &\n{WRITE_PIDS}\nwhile true; do :; done"
    result = executor.execute_code_blocks([CodeBlock(code=code, language="sh")])
    assert result.exit_code == 124
    assert_all_gone(*read_pids(tmp_path / "pids.txt"))


def test_execute_code_timeout_kills_the_loop_and_its_children(tmp_path: Path) -> None:
    start = time.monotonic()
    exit_code, logs, _ = execute_code(
        SPAWN_AND_LOOP, timeout=1, work_dir=str(tmp_path), use_docker=False
    )
    assert time.monotonic() - start < STOPPED_WITHIN
    assert (exit_code, logs) == (1, "spinning\nTimeout")
    assert_all_gone(*read_pids(tmp_path / "pids.txt"))


def test_processes_left_behind_by_a_finished_block_are_killed(tmp_path: Path) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path, timeout=10)
    code = f"sleep 1000 > /dev/null 2>&1 &\n{WRITE_PIDS}\necho done"
    start = time.monotonic()
    result = executor.execute_code_blocks([CodeBlock(code=code, language="sh")])
    assert (result.exit_code, result.output) == (0, "done\n")
    assert_all_gone(*read_pids(tmp_path / "pids.txt"))
    # Even one still holding the output pipe does not make the block wait for it.
    code = f"sleep 1000 &\n{WRITE_PIDS}\necho done"
    result = executor.execute_code_blocks([CodeBlock(code=code, language="sh")])
    assert (result.exit_code, result.output) == (0, "done\n")
    assert time.monotonic() - start < STOPPED_WITHIN
    assert_all_gone(*read_pids(tmp_path / "pids.txt"))


def test_a_term_ignoring_program_is_killed(tmp_path: Path) -> None:
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('x')\ntime.sleep(60)"
    start = time.monotonic()
    result = run([sys.executable, "-c", code], cwd=tmp_path, timeout=1, env=None)
    assert time.monotonic() - start < STOPPED_WITHIN
    assert result == ProcessResult(exit_code=124, stdout="x\n", stderr="", timed_out=True)


def test_timeout_from_a_worker_thread(tmp_path: Path) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path, timeout=1)
    results = []

    def work() -> None:
        results.append(
            executor.execute_code_blocks([CodeBlock(code=SPAWN_AND_LOOP, language="python")])
        )

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(timeout=STOPPED_WITHIN)
    assert not thread.is_alive()
    assert results[0].exit_code == 124
    assert_all_gone(*read_pids(tmp_path / "pids.txt"))


async def test_timeout_from_asyncio_to_thread(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", SPAWN_AND_LOOP, str(tmp_path / "pids.txt")]
    result = await asyncio.wait_for(
        asyncio.to_thread(run, argv, cwd=tmp_path, timeout=1, env=None), timeout=10
    )
    assert result == ProcessResult(exit_code=124, stdout="spinning\n", stderr="", timed_out=True)
    assert_all_gone(*read_pids(tmp_path / "pids.txt"))


def test_run_results_and_leftovers(tmp_path: Path) -> None:
    argv = [
        sys.executable,
        "-c",
        "import sys; print('out'); print('err', file=sys.stderr); sys.exit(4)",
    ]
    expected = ProcessResult(exit_code=4, stdout="out\n", stderr="err\n", timed_out=False)
    assert run(argv, cwd=tmp_path, timeout=10, env=None) == expected
    left = ["sh", "-c", "sleep 1000 & echo done"]
    assert run(left, cwd=tmp_path, timeout=10, env=None).stdout == "done\n"


# -- files stay inside the work dir -------------------------------------------------------------


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


def snapshot(directory: Path) -> set[str]:
    return {str(p.relative_to(directory)) for p in directory.rglob("*")}


@pytest.mark.parametrize("name", ["../escape.py", "sub/../../escape.py", "{outside}/abs.py"])
def test_filename_outside_the_work_dir_is_refused(tmp_path: Path, work: Path, name: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    before = snapshot(tmp_path)
    executor = LocalCommandLineCodeExecutor(work_dir=work)
    code = f"# filename: {name.format(outside=outside)}\nprint('escaped')"
    result = executor.execute_code_blocks(
        [
            CodeBlock(code="print('first')", language="python"),
            CodeBlock(code=code, language="python"),
        ]
    )
    assert (result.exit_code, result.output, result.code_file) == (
        1,
        "Filename is not in the workspace",
        None,
    )
    assert {p for p in snapshot(tmp_path) - before if not p.startswith("work/tmp_code_")} == set()


def test_symlinked_directory_pointing_outside_is_refused(tmp_path: Path, work: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (work / "link").symlink_to(outside, target_is_directory=True)
    executor = LocalCommandLineCodeExecutor(work_dir=work)
    result = executor.execute_code_blocks(
        [CodeBlock(code="# filename: link/evil.py\nprint(1)", language="python")]
    )
    assert (result.exit_code, result.output) == (1, "Filename is not in the workspace")
    assert list(outside.iterdir()) == []


def test_symlinked_file_pointing_outside_is_refused(tmp_path: Path, work: Path) -> None:
    target = tmp_path / "target.sh"
    target.write_text("original")
    (work / "evil.sh").symlink_to(target)
    executor = LocalCommandLineCodeExecutor(work_dir=work)
    result = executor.execute_code_blocks(
        [CodeBlock(code="# filename: evil.sh\necho hi", language="sh")]
    )
    assert (result.exit_code, result.output) == (1, "Filename is not in the workspace")
    assert target.read_text() == "original"


def test_execute_code_refuses_names_outside_the_work_dir(tmp_path: Path, work: Path) -> None:
    before = snapshot(tmp_path)
    for name in ("../escape.py", str(tmp_path / "abs.py")):
        result = execute_code("print(1)", filename=name, work_dir=str(work), use_docker=False)
        assert result == (1, "Filename is not in the workspace", None)
    assert snapshot(tmp_path) == before


# -- environment --------------------------------------------------------------------------------


def test_secrets_are_not_inherited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent-XYZZY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-parent-XYZZY")
    monkeypatch.setenv("HTTPS_PROXY", "http://user:pw@proxy:3128")
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path)
    code = "import os; print(os.environ.get('OPENAI_API_KEY'), os.environ.get('AWS_SECRET_ACCESS_KEY'))"
    result = executor.execute_code_blocks(
        [CodeBlock(code=code, language="python"), CodeBlock(code="env", language="sh")]
    )
    assert result.output.startswith("None None\n")
    assert "XYZZY" not in result.output
    assert "pw@proxy" not in result.output
    assert "PATH=" in result.output  # a usable environment nonetheless
    _, logs, _ = execute_code("env", lang="sh", work_dir=str(tmp_path), use_docker=False)
    assert "XYZZY" not in logs
    assert "PATH=" in logs


def test_safe_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("LANG", "C.UTF-8")
    env = safe_env({"EXTRA": "1"})
    assert "OPENAI_API_KEY" not in env
    assert env["LANG"] == "C.UTF-8"
    assert env["PATH"] == os.environ["PATH"]
    assert env["EXTRA"] == "1"
    assert env["PYTHONUNBUFFERED"] == "1"
    assert safe_env({"OPENAI_API_KEY": "given"})["OPENAI_API_KEY"] == "given"  # explicit is fine


# -- output is bounded --------------------------------------------------------------------------


def test_huge_output_is_capped(tmp_path: Path) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir=tmp_path, timeout=30)
    code = "import sys\nfor _ in range(200):\n    sys.stdout.write('x' * 100_000)\nprint('end', file=sys.stderr)"
    result = executor.execute_code_blocks([CodeBlock(code=code, language="python")])
    assert result.exit_code == 0
    assert result.output.startswith("end\nxxx")  # stderr first, then stdout's head
    assert result.output.endswith(
        f"\n[... output truncated: {20_000_000 - MAX_OUTPUT_BYTES} more bytes ...]"
    )
    assert len(result.output) < MAX_OUTPUT_BYTES + 100


def test_endless_output_until_timeout_is_capped(tmp_path: Path) -> None:
    result = run(["sh", "-c", "yes"], cwd=tmp_path, timeout=1, env=None, max_output=1000)
    assert result.timed_out
    assert result.stdout.startswith("y\n" * 500)
    assert "[... output truncated: " in result.stdout
    assert len(result.stdout) < 1100


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ab", "ab"),
        ("abc", "abc"),
        ("abcdef", "abc\n[... output truncated: 3 more bytes ...]"),
        # A character cut at the limit is dropped whole and counted.
        ("éé", "é\n[... output truncated: 2 more bytes ...]"),
    ],
)
def test_the_cap_keeps_whole_characters_and_counts_the_rest(
    tmp_path: Path, text: str, expected: str
) -> None:
    argv = [sys.executable, "-c", f"import sys; sys.stdout.write({text!r})"]
    result = run(argv, cwd=tmp_path, timeout=30, env=None, max_output=3)
    assert result.stdout == expected


@pytest.fixture
def without_supervisors(monkeypatch: pytest.MonkeyPatch) -> None:
    """A platform without SOCK_SEQPACKET Unix sockets (macOS): no supervisor server can run."""
    import socket

    from parley.coding import _supervisor

    real = socket.socketpair

    def socketpair(*args: object, **kwargs: object) -> object:
        if socket.SOCK_SEQPACKET in (*args, *kwargs.values()):
            raise OSError(93, "Protocol not supported")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "socketpair", socketpair)
    monkeypatch.setattr(_supervisor, "_server", _supervisor._Server())


@pytest.mark.usefixtures("without_supervisors")
def test_without_supervisors_blocks_still_run_in_their_own_process_group(tmp_path: Path) -> None:
    result = run([sys.executable, "-c", "print('ran')"], cwd=tmp_path, timeout=30, env=None)
    assert (result.exit_code, result.stdout) == (0, "ran\n")
    start = time.monotonic()
    result = run(
        [sys.executable, "-c", SPAWN_AND_LOOP, "pids.txt"], cwd=tmp_path, timeout=1, env=None
    )
    assert result.timed_out
    assert time.monotonic() - start < STOPPED_WITHIN
    pgid, _ = (int(p) for p in (tmp_path / "pids.txt").read_text().split())
    deadline = time.monotonic() + SETTLE_SECONDS
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert group_members(pgid) == []
