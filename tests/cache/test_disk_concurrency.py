"""Many processes sharing one disk cache directory, as parallel test runs or agents do."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from parley.cache import Cache

WORKERS = 8
ITEMS = 150
TIMEOUT = 120.0

# Each worker waits for the go file, so that all of them create the (missing) database at the
# same moment, then writes its own keys, reads its neighbour's, and fights over one hot key.
# Every 25 items it closes and makes a new Cache, as the completion client does between calls.
WORKER = r"""
import os, sys, time
from parley.cache import Cache

root, worker, workers, items, go = sys.argv[1], *map(int, sys.argv[2:5]), sys.argv[5]

def value(w, i):
    # every tenth value is big enough for diskcache to keep it in a file of its own
    return {"worker": w, "item": i, "pad": "x" * (40_000 if i % 10 == 0 else 10)}

deadline = time.monotonic() + 60
while not os.path.exists(go):
    if time.monotonic() > deadline:
        sys.exit("never got the go signal")
    time.sleep(0.002)

cache = Cache.disk(cache_seed="shared", cache_path_root=root)
for i in range(items):
    if i and i % 25 == 0:
        cache.close()
        cache = Cache.disk(cache_seed="shared", cache_path_root=root)
    with cache:
        cache.set(f"{worker}:{i}", value(worker, i))
        other = (worker + 1) % workers
        seen = cache.get(f"{other}:{i}")
        if seen is not None and seen != value(other, i):
            sys.exit(f"worker {worker} read a wrong value for {other}:{i}: {seen!r:.100}")
        cache.set("hot", [worker, i])
        hot = cache.get("hot")
        if not (isinstance(hot, list) and len(hot) == 2):
            sys.exit(f"worker {worker} read a wrong hot value: {hot!r}")
cache.close()
"""


@pytest.mark.slow
def test_eight_processes_share_one_disk_cache_without_errors(tmp_path: Path) -> None:
    root = tmp_path / "root"
    go = tmp_path / "go"
    processes = [
        subprocess.Popen(
            [sys.executable, "-W", "error", "-c", WORKER, str(root), str(worker), str(WORKERS),
             str(ITEMS), str(go)],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(WORKERS)
    ]  # fmt: skip
    failures = []
    try:
        go.touch()
        for worker, process in enumerate(processes):
            out, err = process.communicate(timeout=TIMEOUT)
            if process.returncode != 0 or out or err:
                failures.append(f"worker {worker} exited {process.returncode}:\n{out}{err}")
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.communicate(timeout=10)
    assert not failures, "\n".join(failures)

    with Cache.disk(cache_seed="shared", cache_path_root=str(root)) as cache:
        for worker in range(WORKERS):
            for item in range(ITEMS):
                stored = cache.get(f"{worker}:{item}")
                assert stored is not None, f"{worker}:{item} is missing"
                assert stored["worker"] == worker
                assert stored["item"] == item
                assert len(stored["pad"]) == (40_000 if item % 10 == 0 else 10)
        # every worker's last write to the hot key is its last item, so whoever wrote last
        # left that
        worker, item = cache.get("hot")
        assert item == ITEMS - 1
        assert 0 <= worker < WORKERS
