"""Each layer of ``XDIST_GROUPS`` (tests/conftest.py) on one worker, one test at a time.

xdist's ``--dist loadgroup`` learns a test's group from its node id, which the worker rewrites
(``<id>@<group>``); since pytest 9 computes ``Node.nodeid`` that rewrite is lost, and loadgroup
silently spreads a group over every worker. So each worker writes the groups of the tests it
collected to a file (every worker collects the same tests), and the controller's scheduler, a
``LoadGroupScheduling`` (one scope goes whole to one worker), reads the group of a node id
there, falling back to xdist's own reading of the id.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

_FOLDER_ENV = "PARLEY_TEST_XDIST_GROUPS"  # set by the controller, inherited by its workers


def start(config: pytest.Config) -> str | None:
    """In the controller of a loadgroup run: the folder the workers write to (None: no run)."""
    if os.environ.get("PYTEST_XDIST_WORKER") or config.getoption("dist", "no") != "loadgroup":
        return None
    folder = tempfile.mkdtemp(prefix="parley-xdist-groups-")
    os.environ[_FOLDER_ENV] = folder
    return folder


def finish(folder: str | None) -> None:
    if folder is not None:
        os.environ.pop(_FOLDER_ENV, None)
        shutil.rmtree(folder, ignore_errors=True)


def record(groups: dict[str, str]) -> None:
    """In a worker: the groups of its collected tests, by node id, for the controller."""
    folder, worker = os.environ.get(_FOLDER_ENV), os.environ.get("PYTEST_XDIST_WORKER")
    if not folder or not worker:
        return
    path = Path(folder) / f"{worker}.json"
    aside = path.with_suffix(".part")
    aside.write_text(json.dumps(groups))
    aside.replace(path)  # whole or absent for the controller


def make_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadGroupScheduling

    class GroupScheduling(LoadGroupScheduling):  # type: ignore[misc]
        _groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self._groups is None:
                # Read once the collection is complete: every worker wrote its file by then.
                folder = Path(os.environ[_FOLDER_ENV])
                self._groups = {}
                for path in sorted(folder.glob("*.json")):
                    self._groups.update(json.loads(path.read_text()))
            group = self._groups.get(nodeid)
            return group if group is not None else str(super()._split_scope(nodeid))

    return GroupScheduling(config, log)
