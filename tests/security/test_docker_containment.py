"""Code running in the Docker sandbox stops when whoever runs it goes away, on the real engine.

* A cancelled chat (a cancelled task, Ctrl-C in a sync chat) stops the block's processes within
  a second, and a sync program interrupted mid-block exits at once instead of waiting for the
  block's timeout.
* A parley process killed outright (SIGKILL: nothing of it runs any more) takes its container
  with it within seconds: the running block stops and the engine removes the container, even if
  the process had forked children that inherited its descriptors.
* ``stop_container=False`` still means what it says: the container outlives the process's
  connections to the engine.

Each block writes a heartbeat file in the work dir; "stopped" means the file stops growing.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from parley import ConversableAgent
from parley._core.runtime import run_in_thread
from parley.coding import CodeBlock
from parley.coding.docker._owner import SANDBOX_LABEL
from tests.coding._docker_support import (
    REPO,
    docker_client,
    ensure_sandbox_image,
    executor,
    processes,
    wait_for,
)

pytestmark = pytest.mark.docker

HEARTBEAT = "heartbeat"
BEAT_SECONDS = 0.2
# For far longer than any test waits (and bounded, should everything else fail).
BEATING = (
    f"i=0; while [ $i -lt 3000 ]; do echo beat >> {HEARTBEAT}; i=$((i+1)); "
    f"sleep {BEAT_SECONDS}; done"
)
QUIET_SECONDS = 1.0  # five beats missed: the block is not running
START_SECONDS = 60.0  # for a child to start its container and the block's first beat
# The timeout of the blocks the Ctrl-C tests interrupt: what those tests guard against is a
# program that waits for it. Cancelling the block, removing the container and exiting take about
# 0.2 s here, 1.4 s with both cores busy, and over 6 s once in a CI run (Docker's daemon removing
# the container on a loaded machine): the exit is waited for up to SIGINT_EXIT_SECONDS, generous
# for a loaded machine and still far below the timeout.
SIGINT_BLOCK_TIMEOUT = 600
SIGINT_EXIT_SECONDS = 60.0
PARENT_DEATH_SECONDS = 5.0  # for the container to see its owner die, stop and be removed


def sh(code: str) -> CodeBlock:
    return CodeBlock(language="sh", code=code)


def beats(work_dir: Path) -> int:
    try:
        return (work_dir / HEARTBEAT).stat().st_size
    except FileNotFoundError:
        return 0


def stops_beating(work_dir: Path, within: float) -> bool:
    """Whether the heartbeat goes quiet for :data:`QUIET_SECONDS` within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        before = beats(work_dir)
        time.sleep(QUIET_SECONDS)
        if beats(work_dir) == before:
            return True
    return False


def sandboxes_on(work_dir: Path) -> list[str]:
    """The ids of the sandbox containers, running or not, that mount ``work_dir``."""
    source = str(work_dir.resolve())
    with docker_client() as client:
        found = client.api.containers(all=True, filters={"label": SANDBOX_LABEL})
        return [
            c["Id"] for c in found if any(m.get("Source") == source for m in c.get("Mounts") or [])
        ]


def running(container_id: str) -> bool:
    import docker

    with docker_client() as client:
        try:
            return bool(client.api.inspect_container(container_id)["State"]["Running"])
        except docker.errors.NotFound:
            return False


def remove_sandboxes_on(work_dir: Path) -> None:
    import docker

    with docker_client() as client:
        for container_id in sandboxes_on(work_dir):
            try:
                client.api.remove_container(container_id, force=True)
            except docker.errors.APIError:
                pass


@contextmanager
def child(script: str, work_dir: Path) -> Iterator[subprocess.Popen[str]]:
    """A Python process running ``script`` with the work dir as argument, and whose block has
    started beating when this yields; whatever it leaves is killed and removed afterwards."""
    prelude = textwrap.dedent(
        f"""\
        import os, sys
        sys.path.insert(0, {str(REPO)!r})
        IMAGE = {ensure_sandbox_image()!r}
        BLOCK = {BEATING!r}
        WORK_DIR = sys.argv[1]
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", prelude + textwrap.dedent(script), str(work_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        if not wait_for(lambda: beats(work_dir) > 0 or process.poll() is not None, START_SECONDS):
            pytest.fail("the child's block did not start")
        if process.poll() is not None:
            pytest.fail(f"the child ended early:\n{process.communicate(timeout=10)[1]}")
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        remove_sandboxes_on(work_dir)


def kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# -- cancelling ----------------------------------------------------------------------------------

SYNC_CHAT = """\
from parley import ConversableAgent
from parley.coding.docker_commandline_code_executor import DockerCommandLineCodeExecutor
coder = ConversableAgent("coder", llm_config=False, human_input_mode="NEVER",
                         default_auto_reply="```sh\\n" + BLOCK + "\\n```")
if sys.argv[2] == "executor":
    ex = DockerCommandLineCodeExecutor(image=IMAGE, work_dir=WORK_DIR, timeout=TIMEOUT)
    config = {"executor": ex}
else:
    config = {"use_docker": IMAGE, "work_dir": WORK_DIR, "timeout": TIMEOUT}
runner = ConversableAgent("runner", llm_config=False, human_input_mode="NEVER",
                          code_execution_config=config)
runner.initiate_chat(coder, message="go", max_turns=2, silent=True)
"""

SYNC_CALL = """\
from parley.coding import CodeBlock
from parley.coding.docker_commandline_code_executor import DockerCommandLineCodeExecutor
ex = DockerCommandLineCodeExecutor(image=IMAGE, work_dir=WORK_DIR, timeout=TIMEOUT)
ex.execute_code_blocks([CodeBlock(language="sh", code=BLOCK)])
"""


@pytest.mark.parametrize(
    ("script", "form"),
    [(SYNC_CHAT, "executor"), (SYNC_CHAT, "legacy"), (SYNC_CALL, "")],
    ids=["sync-chat-executor", "sync-chat-use_docker", "sync-executor-call"],
)
def test_ctrl_c_stops_a_docker_block_and_the_program_exits_at_once(
    tmp_path: Path, script: str, form: str
) -> None:
    prelude = f"sys.argv[2:] = [{form!r}]\nTIMEOUT = {SIGINT_BLOCK_TIMEOUT}\n"
    with child(prelude + script, tmp_path) as process:
        process.send_signal(signal.SIGINT)
        try:
            _, stderr = process.communicate(timeout=SIGINT_EXIT_SECONDS)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the program did not exit within {SIGINT_EXIT_SECONDS} s of Ctrl-C")
        assert "KeyboardInterrupt" in stderr, stderr
        # Its container went with it: removed, so the block no longer beats.
        assert sandboxes_on(tmp_path) == []
        assert stops_beating(tmp_path, within=SIGINT_EXIT_SECONDS)


@pytest.mark.parametrize("how", ["run_in_thread", "a_initiate_chat"])
async def test_cancelling_the_task_running_a_block_stops_it_at_once(
    tmp_path: Path, how: str
) -> None:
    with executor(tmp_path, timeout=60) as ex:
        if how == "run_in_thread":
            work = run_in_thread(ex.execute_code_blocks, [sh(BEATING)])
        else:
            coder = ConversableAgent(
                "coder",
                llm_config=False,
                human_input_mode="NEVER",
                default_auto_reply=f"```sh\n{BEATING}\n```",
            )
            runner = ConversableAgent(
                "runner",
                llm_config=False,
                human_input_mode="NEVER",
                code_execution_config={"executor": ex},
            )
            work = runner.a_initiate_chat(coder, message="go", max_turns=2, silent=True)
        task = asyncio.ensure_future(work)
        started = await asyncio.to_thread(wait_for, lambda: beats(tmp_path) > 0, START_SECONDS)
        assert started
        assert not task.done()
        start = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        elapsed = time.monotonic() - start
        assert elapsed < 30  # not at the executor's 60 s timeout
        assert await asyncio.to_thread(stops_beating, tmp_path, QUIET_SECONDS + 0.5)
        left = await asyncio.to_thread(processes, ex)
        # The executor goes on: the next block runs in the same container.
        after = await asyncio.to_thread(ex.execute_code_blocks, [sh("echo next")])
    assert not [p for p in left if "sleep" in p or HEARTBEAT in p], left
    assert (after.exit_code, after.output) == (0, "next\n")


# -- the owner dies --------------------------------------------------------------------------------

KILLED_OWNER = """\
import signal, time
from parley.coding import CodeBlock
from parley.coding.docker_commandline_code_executor import DockerCommandLineCodeExecutor
ex = DockerCommandLineCodeExecutor(image=IMAGE, work_dir=WORK_DIR, timeout=120)
# Blocks before the long one: each ends with every process but PID 1 killed (the wrapper's
# `kill -KILL -1`, PID 1's own on SIGUSR1), which the container's watch on its owner survives.
assert ex.execute_code_blocks([CodeBlock(language="sh", code="echo ran")]).exit_code == 0
ex.execute_code_blocks([CodeBlock(language="sh", code="kill -USR1 1; sleep 5")])
if sys.argv[2] == "forked":
    # A child that inherited every descriptor, and outlives this process.
    pid = os.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    print(pid, flush=True)
ex.execute_code_blocks([CodeBlock(language="sh", code=BLOCK)])
"""


@pytest.fixture(scope="module")
def image_without_python() -> Iterator[str]:
    """The sandbox image minus python3, committed from it (no registry): its containers' keeper
    is the ``sh`` one (``parley.coding.docker._keeper``)."""
    import docker

    repository, tag = "parley-sandbox-nopython", "test"
    with docker_client() as client:
        container = client.containers.create(
            ensure_sandbox_image(),
            entrypoint=["/bin/sh", "-c", "rm -f /usr/bin/python3* /usr/local/bin/python3*"],
            user="0:0",
        )
        try:
            container.start()
            container.wait(timeout=60)
            container.commit(repository=repository, tag=tag)
        finally:
            container.remove(force=True)
    try:
        yield f"{repository}:{tag}"
    finally:
        with docker_client() as client:
            try:
                client.images.remove(f"{repository}:{tag}", force=True)
            except docker.errors.APIError:
                pass


@pytest.mark.parametrize("form", ["plain", "forked", "sh keeper"])
def test_a_killed_owner_takes_its_container_and_running_block_with_it(
    tmp_path: Path, form: str, request: pytest.FixtureRequest
) -> None:
    orphan = None
    script = f"sys.argv[2:] = [{form!r}]\n" + KILLED_OWNER
    if form == "sh keeper":
        script = f"IMAGE = {request.getfixturevalue('image_without_python')!r}\n" + script
    with child(script, tmp_path) as process:
        [container] = sandboxes_on(tmp_path)
        if form == "forked":
            assert process.stdout is not None
            orphan = int(process.stdout.readline())
        try:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
            assert stops_beating(tmp_path, within=PARENT_DEATH_SECONDS)
            assert wait_for(lambda: sandboxes_on(tmp_path) == [], PARENT_DEATH_SECONDS)
            assert not running(container)
        finally:
            if orphan is not None:
                kill_quietly(orphan)


def test_a_container_kept_on_purpose_outlives_its_owner_s_connections(tmp_path: Path) -> None:
    # What interpreter exit does to a stop_container=False executor (its finalizer), and all
    # the kernel does when the process is killed: this process's connections to the engine
    # close. (Killing a child instead would let any parley process on this machine remove the
    # container as an orphan meanwhile: docker._owner.reap_orphans.)
    with executor(tmp_path, stop_container=False) as ex:
        try:
            assert ex.execute_code_blocks([sh("echo ran")]).output == "ran\n"
            [container] = sandboxes_on(tmp_path)
            ex._finalizer()
            time.sleep(2.0)  # longer than a container on a lifeline takes to end
            assert running(container)
        finally:
            remove_sandboxes_on(tmp_path)
