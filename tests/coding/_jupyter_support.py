"""Helpers for the tests of ``parley.coding.jupyter`` (``@pytest.mark.jupyter``).

Processes are looked for in /proc (Linux), as a user would with ``ps``: a kernel or gateway
is gone when no live (non-zombie) process has its pid or mentions its files.
"""

from __future__ import annotations

import time
from pathlib import Path

from parley.coding import CodeBlock
from tests.coding._processes import alive

SETTLE_SECONDS = 5.0  # for killed processes to disappear from /proc
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

PLOT = (
    "import matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots()\n"
    "ax.plot([1, 2, 3], [1, 4, 9])\n"
    "plt.show()\n"
)
"""A block that draws a plot (the kernel's inline backend sends it as a PNG)."""

# Prints the kernel's pid and that of a `sleep` it starts in a session of its own (so that no
# process-group kill reaches it).
PIDS = (
    "import os, subprocess\n"
    "sleeper = subprocess.Popen(['sleep', '1000'], start_new_session=True)\n"
    "print(os.getpid(), sleeper.pid)\n"
)


def python(*codes: str) -> list[CodeBlock]:
    """Python blocks."""
    return [CodeBlock(code=code, language="python") for code in codes]


def processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line contains ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def wait_until_gone(*pids: int, mentioning: str | None = None) -> None:
    """Fail unless the processes (and those mentioning ``mentioning``) end within a few
    seconds."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        left = [pid for pid in pids if alive(pid)]
        if mentioning is not None:
            left += processes_mentioning(mentioning)
        if not left:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"still running: {left}")
        time.sleep(0.05)


def saved_png(path: str, output_dir: Path) -> bytes:
    """The PNG file ``path`` holds (it must lie in ``output_dir`` and be a real PNG)."""
    file = Path(path)
    assert file.is_absolute()
    assert file.parent == output_dir.resolve()
    assert file.suffix == ".png"
    data = file.read_bytes()
    assert data.startswith(PNG_MAGIC), data[:16]
    return data
