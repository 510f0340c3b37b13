"""Nothing a locally executed block starts may outlive it.

Before the fix, children that started a new session (``setsid``, a double fork) survived the
block's end and its timeout; Ctrl-C during a block made the interpreter's exit wait the whole
timeout; cancelling an asyncio task left the process running; and killing parley left the block
running. Each block now runs under a supervisor that is the child subreaper of everything the
block starts (``parley/coding/_reaper.py``).

The blocks write the pids of what they start into the work dir, so the tests can check those
processes, whatever their session or group, from outside. Each test runs with and without the
bubblewrap sandbox (``sandbox=True``), whose block is the same supervisor's program: there the
pids a block sees are its own PID namespace's, so the tests also look for every process whose
current directory is the work dir.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from parley import ConversableAgent, UserProxyAgent
from parley._core.runtime import run_in_thread
from parley.code_utils import execute_code
from parley.coding import CodeBlock, LocalCommandLineCodeExecutor
from tests.coding._bwrap_support import pids_in

REPO = Path(__file__).resolve().parents[2]

# A python block that leaves three processes behind, each escaping its process group its own
# way, records their pids and its own in pids.txt, then runs {tail}.
ESCAPING_BLOCK = textwrap.dedent(
    """\
    import os, subprocess, time

    read_end, write_end = os.pipe()
    if os.fork() == 0:  # the classic daemon: double fork in a new session
        os.setsid()
        if os.fork() == 0:
            os.write(write_end, b"%d\\n" % os.getpid())
            time.sleep(300)
        os._exit(0)
    os.wait()
    pids = [int(os.read(read_end, 64)), os.getpid()]
    pids.append(subprocess.Popen(["setsid", "sleep", "301"]).pid)
    pids.append(subprocess.Popen(["sleep", "302"], start_new_session=True).pid)
    with open("pids.tmp", "w") as f:
        f.write(" ".join(map(str, pids)))
    os.rename("pids.tmp", "pids.txt")
    print("started", flush=True)
    {tail}
    """
)


def escaping_block(tail: str = "pass") -> str:
    return ESCAPING_BLOCK.format(tail=tail)


def recorded_pids(work_dir: Path, deadline: float = 120.0) -> list[int]:
    """The pids the block wrote, once it has written them (and they exist); ``deadline``
    allows for starting Python, parley and a sandbox on a loaded machine."""
    path = work_dir / "pids.txt"
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return [int(p) for p in path.read_text().split()]
        time.sleep(0.02)
    pytest.fail("the block never wrote its pids")


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def ours(pid: int, work_dir: Path) -> bool:
    """Whether ``pid`` is still a process of the block (not a new one that reused the pid)."""
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return False
    return cwd == str(work_dir.resolve())


def survivors(pids: list[int], work_dir: Path) -> list[int]:
    """The block's processes still running: those of ``pids``, and (for a sandboxed block,
    whose pids are its namespace's) any process whose current directory is the work dir."""
    candidates = sorted({*pids, *pids_in(work_dir)})
    return [p for p in candidates if alive(p) and ours(p, work_dir)]


def wait_all_gone(pids: list[int], work_dir: Path, within: float) -> float:
    """Seconds until none of ``pids`` runs; fails after ``within``."""
    start = time.monotonic()
    while survivors(pids, work_dir):
        if time.monotonic() - start > within:
            pytest.fail(f"still running after {within} s: {survivors(pids, work_dir)}")
        time.sleep(0.02)
    return time.monotonic() - start


@pytest.fixture
def work_dir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture(params=[False, pytest.param(True, marks=pytest.mark.bwrap)], ids=["", "sandbox"])
def sandbox(request: pytest.FixtureRequest) -> bool:
    """Whether the blocks run in the bubblewrap sandbox."""
    return bool(request.param)


def test_detached_children_end_with_the_block(work_dir: Path, sandbox: bool) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir=work_dir, timeout=30, sandbox=sandbox)
    result = executor.execute_code_blocks([CodeBlock(language="python", code=escaping_block())])
    assert result.exit_code == 0, result.output
    pids = recorded_pids(work_dir)
    assert len(pids) == 4
    assert survivors(pids, work_dir) == []


def test_detached_children_end_at_the_timeout(work_dir: Path, sandbox: bool) -> None:
    executor = LocalCommandLineCodeExecutor(work_dir=work_dir, timeout=3, sandbox=sandbox)
    block = escaping_block("time.sleep(100)")
    start = time.monotonic()
    result = executor.execute_code_blocks([CodeBlock(language="python", code=block)])
    assert time.monotonic() - start < 50  # the 3 s timeout, not the block's 100 s
    assert result.exit_code == 124
    assert "started" in result.output
    assert survivors(recorded_pids(work_dir), work_dir) == []


def test_shell_background_and_nohup_end_with_the_block(work_dir: Path, sandbox: bool) -> None:
    block = "nohup setsid sleep 303 >/dev/null 2>&1 &\n(sleep 304 &) \necho $! > pids.txt\n"
    executor = LocalCommandLineCodeExecutor(work_dir=work_dir, timeout=30, sandbox=sandbox)
    assert executor.execute_code_blocks([CodeBlock(language="sh", code=block)]).exit_code == 0
    leftovers = subprocess.run(["pgrep", "-f", "sleep 30[34]"], capture_output=True, text=True)
    assert survivors([int(p) for p in leftovers.stdout.split()], work_dir) == []


def test_killing_its_supervisor_does_not_free_the_block(work_dir: Path) -> None:
    """Code that kills the process watching it is still contained (its orphans are adopted by
    the supervisors' server, which kills them). (A sandboxed block cannot even see its
    supervisor: tests/security/test_bwrap_sandbox.py.)"""
    executor = LocalCommandLineCodeExecutor(work_dir=work_dir, timeout=30)
    block = escaping_block("os.kill(os.getppid(), 9); time.sleep(100)")
    start = time.monotonic()
    result = executor.execute_code_blocks([CodeBlock(language="python", code=block)])
    assert time.monotonic() - start < 25  # not at the executor's 30 s timeout
    assert result.exit_code != 0
    wait_all_gone(recorded_pids(work_dir), work_dir, within=10.0)


def test_legacy_execute_code_contains_too(work_dir: Path, sandbox: bool) -> None:
    exit_code, logs, _ = execute_code(
        escaping_block(), work_dir=str(work_dir), use_docker=False, sandbox=sandbox
    )
    assert exit_code == 0, logs
    assert survivors(recorded_pids(work_dir), work_dir) == []


def _through_run_in_thread(work_dir: Path, block: str, sandbox: bool) -> Coroutine[Any, Any, Any]:
    executor = LocalCommandLineCodeExecutor(work_dir=work_dir, timeout=120, sandbox=sandbox)
    blocks = [CodeBlock(language="python", code=block)]
    return run_in_thread(executor.execute_code_blocks, blocks)


def _through_a_chat(work_dir: Path, block: str, sandbox: bool) -> Coroutine[Any, Any, Any]:
    executor = LocalCommandLineCodeExecutor(work_dir=work_dir, sandbox=sandbox)
    proxy = UserProxyAgent(
        "proxy", human_input_mode="NEVER", code_execution_config={"executor": executor}
    )
    sender = ConversableAgent("sender", llm_config=False, human_input_mode="NEVER")
    message = f"```python\n{block}```"
    return sender.a_initiate_chat(proxy, message=message, max_turns=1, silent=True)


@pytest.mark.parametrize("start", [_through_run_in_thread, _through_a_chat])
async def test_cancelling_the_task_stops_the_block_at_once(
    work_dir: Path, sandbox: bool, start: Callable[[Path, str, bool], Coroutine[Any, Any, Any]]
) -> None:
    task = asyncio.create_task(start(work_dir, escaping_block("time.sleep(100)"), sandbox))
    pids = await asyncio.to_thread(recorded_pids, work_dir)
    task.cancel()
    begun = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - begun < 30  # not after the block's 100 s
    assert await asyncio.to_thread(survivors, pids, work_dir) == []


# The blocks the tests interrupt run this long (seconds), unless stopped; what the tests guard
# against is waiting for them (or their timeout). Stopped, they are gone in well under a second
# on an idle machine; PROMPTLY bounds the wait on a loaded one and is still far below.
LONG_BLOCK = 600
PROMPTLY = 60.0

CHAT_SCRIPT = """
import sys
from parley import ConversableAgent, UserProxyAgent
from parley.coding import LocalCommandLineCodeExecutor

work_dir, block, sandbox, timeout = sys.argv[1], sys.argv[2], sys.argv[3] == "sandbox", sys.argv[4]
executor = LocalCommandLineCodeExecutor(work_dir=work_dir, timeout=int(timeout), sandbox=sandbox)
proxy = UserProxyAgent(
    "proxy", human_input_mode="NEVER", code_execution_config={"executor": executor}
)
sender = ConversableAgent("sender", llm_config=False, human_input_mode="NEVER")
sender.initiate_chat(proxy, message="```python\\n" + block + "```", max_turns=1, silent=True)
"""

EXECUTOR_SCRIPT = """
import sys
from parley.coding import CodeBlock, LocalCommandLineCodeExecutor

work_dir, block, sandbox, timeout = sys.argv[1], sys.argv[2], sys.argv[3] == "sandbox", sys.argv[4]
executor = LocalCommandLineCodeExecutor(work_dir=work_dir, timeout=int(timeout), sandbox=sandbox)
executor.execute_code_blocks([CodeBlock(language="python", code=block)])
"""


def _start(script: str, work_dir: Path, block: str, sandbox: bool) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            script,
            str(work_dir),
            block,
            "sandbox" if sandbox else "host",
            str(2 * LONG_BLOCK),  # the executor's timeout: the block ends first
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def test_ctrl_c_in_a_sync_chat_stops_the_block_and_exits_promptly(
    work_dir: Path, sandbox: bool
) -> None:
    block = escaping_block(f"time.sleep({LONG_BLOCK})")
    process = _start(CHAT_SCRIPT, work_dir, block, sandbox)
    try:
        pids = recorded_pids(work_dir)
        process.send_signal(signal.SIGINT)
        wait_all_gone(pids, work_dir, within=PROMPTLY)
        try:
            _, stderr = process.communicate(timeout=PROMPTLY)
        except subprocess.TimeoutExpired:
            pytest.fail("the interpreter's exit waited for the block")
    finally:
        process.kill()
        process.communicate()
    assert b"KeyboardInterrupt" in stderr


def test_killing_parley_stops_the_block(work_dir: Path, sandbox: bool) -> None:
    block = escaping_block(f"time.sleep({LONG_BLOCK})")
    process = _start(EXECUTOR_SCRIPT, work_dir, block, sandbox)
    try:
        pids = recorded_pids(work_dir)
        process.kill()  # SIGKILL: parley runs no cleanup at all
        process.wait()
        wait_all_gone(pids, work_dir, within=PROMPTLY)
    finally:
        process.kill()
        process.communicate()
