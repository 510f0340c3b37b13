"""Starting a batch's own Ray instance on a loaded machine (parley/batch/_ray_start.py): a start
that missed Ray's fixed 30 s wait is cleaned up and tried again within ``init_timeout``; then a
clear ``RayStartError``; any other error of ``ray.init`` at once.

Ray itself cannot be made to miss its wait on demand, so ``ray.init`` here is a stand-in that
does what a timed-out start does: it launches real processes (whose command line names Ray's
folder, as the GCS and the raylet do) and raises Ray's exception. The real start is exercised
by notebooks/batch_evaluation.ipynb, whose batch starts its own instance through this path.
"""

from __future__ import annotations

import gc
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from parley.batch import RayBackend, RayStartError
from parley.batch._ray_start import (
    REGISTRATION_WAIT,
    allow_slow_registration,
    start_ray,
    startup_timed_out,
)

# Ray's words (ray/_private/node.py), as its exception says them.
TIMED_OUT = (
    "The current node timed out during startup. This could happen because some of the raylet "
    "failed to startup or the GCS has become overloaded."
)


class Clock:
    """Time that moves only when a start is attempted: the budget, not the machine, decides."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class StandIn:
    """``ray.init`` that times out ``failures`` times, each time leaving a process behind."""

    def __init__(self, tmp_path: Path, clock: Clock, failures: int, step: float = 40.0) -> None:
        folder = tmp_path / "ray"  # a command line naming it looks like one of Ray's programs
        folder.mkdir(exist_ok=True)
        self.program = folder / "gcs_server.py"
        # It says when it runs: by the time Ray gives up, its programs have been up for a while.
        self.program.write_text(
            "import pathlib, sys, time\npathlib.Path(sys.argv[1]).touch()\n"
            "while True:\n    time.sleep(1)\n"
        )
        self.tmp_path = tmp_path
        self.clock, self.failures, self.step = clock, failures, step
        self.calls: list[dict[str, Any]] = []
        self.left: list[subprocess.Popen[bytes]] = []
        self.shutdowns = 0

    def init(self, address: str | None = None, **kwargs: Any) -> None:
        self.calls.append({"address": address, **kwargs})
        self.clock.now += self.step
        if len(self.calls) <= self.failures:
            up = self.tmp_path / f"up-{len(self.calls)}"
            self.left.append(subprocess.Popen([sys.executable, str(self.program), str(up)]))
            deadline = time.monotonic() + 120
            while not up.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            raise Exception(TIMED_OUT)

    def shutdown(self) -> None:
        self.shutdowns += 1


def test_a_start_that_timed_out_is_tried_again_and_its_processes_stopped(tmp_path: Path) -> None:
    clock = Clock()
    ray = StandIn(tmp_path, clock, failures=2)
    attempts = start_ray(ray, None, {"num_cpus": 2}, budget=300.0, clock=clock)
    assert attempts == 3
    assert ray.calls == [{"address": None, "num_cpus": 2}] * 3
    # What each failed start launched is gone (and reaped), before the next attempt.
    assert all(p.poll() is not None for p in ray.left)


def test_a_process_that_is_not_rays_stays(tmp_path: Path) -> None:
    clock = Clock()
    ray = StandIn(tmp_path, clock, failures=1)
    original = ray.init
    mine: list[subprocess.Popen[bytes]] = []

    def init_while_something_else_starts(address: str | None = None, **kwargs: Any) -> None:
        # Started while the failed start runs, as another thread of the program might.
        if not mine:
            mine.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]))
        original(address, **kwargs)

    ray.init = init_while_something_else_starts  # type: ignore[method-assign]
    try:
        assert start_ray(ray, None, {}, budget=300.0, clock=clock) == 2
        assert mine[0].poll() is None
        assert ray.left[0].poll() is not None
    finally:
        for process in mine:
            process.kill()
            process.wait()


def test_the_budget_spent_raises_a_clear_error_with_rays_as_cause(tmp_path: Path) -> None:
    clock = Clock()
    ray = StandIn(tmp_path, clock, failures=100, step=40.0)
    with pytest.raises(RayStartError) as caught:
        start_ray(ray, None, {}, budget=100.0, clock=clock)
    error = caught.value
    assert error.attempts == 3  # at 40, 80 (< 100 s: again) and 120 s (spent)
    assert "init_timeout" in str(error)
    assert "3 attempt(s)" in str(error)
    assert isinstance(error, RuntimeError)
    assert startup_timed_out(error.__cause__)  # type: ignore[arg-type]
    assert all(p.poll() is not None for p in ray.left)
    again = pickle.loads(pickle.dumps(error))  # it crosses process boundaries whole
    assert (again.attempts, again.budget, str(again)) == (3, 100.0, str(error))


def test_another_error_is_not_retried(tmp_path: Path) -> None:
    clock = Clock()

    class Refused(StandIn):
        def init(self, address: str | None = None, **kwargs: Any) -> None:
            self.calls.append({"address": address})
            raise ConnectionError("Could not find any running Ray instance at 10.0.0.9:6379")

    ray = Refused(tmp_path, clock, failures=0)
    with pytest.raises(ConnectionError, match="Could not find"):
        start_ray(ray, "10.0.0.9:6379", {}, budget=300.0, clock=clock)
    assert len(ray.calls) == 1


def test_the_backend_gives_five_minutes_by_default() -> None:
    assert RayBackend().init_timeout == 300.0
    assert RayBackend(init_timeout=900).init_timeout == 900


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_no_process_is_left_by_the_module_tests() -> None:
    # The stand-in programs of the tests above are all stopped: none of this process's
    # children still runs one.
    children = Path(f"/proc/{os.getpid()}/task").glob("*/children")
    pids = [int(p) for f in children for p in f.read_text().split()]
    commands = []
    for pid in pids:
        try:
            commands.append(Path(f"/proc/{pid}/cmdline").read_bytes())
        except OSError:
            continue
    assert not [c for c in commands if b"gcs_server.py" in c]


def test_a_new_instance_may_take_longer_to_register() -> None:
    env: dict[str, str] = {}
    assert allow_slow_registration(300.0, env)
    assert env == {REGISTRATION_WAIT: "120"}  # at most 120 s: one stuck start not the budget
    env = {}
    allow_slow_registration(45.0, env)
    assert env[REGISTRATION_WAIT] == "45"
    env = {REGISTRATION_WAIT: "600"}  # the user's value stays
    assert not allow_slow_registration(300.0, env)
    assert env == {REGISTRATION_WAIT: "600"}


def test_the_wait_is_raised_only_for_an_instance_the_batch_starts(tmp_path: Path) -> None:
    script = f"""
import os, sys
from parley.batch import RayBackend
from parley.batch._ray_backend import run_on_ray

class Stop(Exception):
    pass

def stop(*args, **kwargs):
    raise Stop
# Stops where Ray would be imported: what was set before is what Ray would read.
import parley.batch._ray_backend as backend
backend._import_ray = stop
try:
    run_on_ray(RayBackend(address=sys.argv[1] or None, init_timeout=90), None, None)
except Stop:
    pass
print(os.environ.get("{REGISTRATION_WAIT}"), os.environ.get("RAY_AUTH_MODE"))
"""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("RAY_") and k not in ("TMPDIR", "RAY_TMPDIR")
    }
    env["TMPDIR"] = str(tmp_path)  # no cluster `ray start` began here
    root = Path(__file__).resolve().parents[2]
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])

    def run(address: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", script, address],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return done.stdout.strip()

    assert run("") == "90 token"  # a new instance: a longer wait and token authentication
    assert run("10.0.0.9:6379") == "None None"  # joining a cluster: its own settings


def test_a_failed_starts_process_objects_leave_no_false_warning(tmp_path: Path) -> None:
    # Ray's node holds its processes' Popen objects and is dropped with the error: collected
    # later, each would warn "subprocess ... is still running" (filterwarnings=error makes that
    # a failure of whatever test runs then), though its process was stopped.
    clock = Clock()

    class Forgetful(StandIn):
        def init(self, address: str | None = None, **kwargs: Any) -> None:
            self.calls.append({"address": address})
            if len(self.calls) == 1:
                up = self.tmp_path / "up-forgetful"
                process = subprocess.Popen([sys.executable, str(self.program), str(up)])
                self.pids = [process.pid]
                deadline = time.monotonic() + 120
                while not up.exists() and time.monotonic() < deadline:
                    time.sleep(0.02)
                raise Exception(TIMED_OUT)

    ray = Forgetful(tmp_path, clock, failures=1)
    assert start_ray(ray, None, {}, budget=300.0, clock=clock) == 2
    gc.collect()  # a warning left behind would surface here
    assert not Path(f"/proc/{ray.pids[0]}").exists()  # stopped and reaped
