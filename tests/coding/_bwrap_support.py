"""Helpers for the tests that run code in the local executor's bubblewrap sandbox
(``@pytest.mark.bwrap``: they need bubblewrap, Debian's ``bubblewrap`` package, and a kernel
that lets it create its namespaces; without them they fail, they are not skipped).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from parley.coding import LocalCommandLineCodeExecutor

SUPERVISOR = "parley/coding/_reaper.py"  # in the command line of every block's supervisor


@contextmanager
def executor(work_dir: Path, **options: Any) -> Iterator[LocalCommandLineCodeExecutor]:
    """A sandboxed LocalCommandLineCodeExecutor, stopped afterwards."""
    options.setdefault("timeout", 20)
    with LocalCommandLineCodeExecutor(work_dir=work_dir, sandbox=True, **options) as ex:
        yield ex


def pids_in(work_dir: Path) -> dict[int, str]:
    """This machine's processes whose current directory is ``work_dir``, with their command
    lines; parley's block supervisors and processes already exiting left out (a supervisor may
    still be exiting after its report).

    A sandboxed block's processes, seen from the host: each block has a PID namespace of its
    own, so a later block cannot list what an earlier one left (as ``ps`` in Docker's one
    long-lived container can), and the pids a block sees of its own mean nothing out here.
    """
    target = str(work_dir.resolve())
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/cwd") != target:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                line = cmdline.read().replace(b"\0", b" ").decode().strip()
        except OSError:
            continue  # it has just ended (or is not ours to look at)
        # An empty command line: a process in the middle of exiting (a supervisor that has
        # just reported, say), whose memory is gone but not yet its current directory.
        if line and SUPERVISOR not in line:
            found[int(entry)] = line
    return found


def processes_in(work_dir: Path) -> list[str]:
    """The command lines of :func:`pids_in`."""
    return list(pids_in(work_dir).values())
