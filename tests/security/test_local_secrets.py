"""Secrets of the parley process are out of reach of the code it runs on the host.

The executed code's own environment was clean, but it read every secret of parley's
environment from ``/proc/<parley>/environ``, and an ``llm_config`` key from
``/proc/<parley>/mem`` (as root). parley is now non-dumpable while code runs, and when it runs
as root the code runs without the capabilities that would bypass that. Local execution is still
not isolation, and parley says so once per process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENV_SECRET = "sk-env-secret-4bd1c0"
MEMORY_SECRET = "sk-memory-secret-" + "9f3e7a"  # built at run time: not a constant in a file

SNOOP = textwrap.dedent(
    """\
    pid = {pid}
    try:
        environ = open(f"/proc/{{pid}}/environ", "rb").read()
        print("LEAKED" if {env!r}.encode() in environ else "environ read, no secret")
    except OSError as error:
        print("environ denied", error.errno)
    try:
        memory = open(f"/proc/{{pid}}/mem", "rb")
        for line in open(f"/proc/{{pid}}/maps").read().splitlines():
            span, perms = line.split()[:2]
            if "r" not in perms:
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                memory.seek(start)
                if {mem!r}.encode() in memory.read(end - start):
                    print("LEAKED")
                    break
            except (OSError, OverflowError, ValueError):
                continue
        else:
            print("memory read, no secret")
    except OSError as error:
        print("memory denied", error.errno)
    """
)


VICTIM = """
import os, sys
from pathlib import Path
from parley import AssistantAgent
from parley.code_utils import execute_code
from parley.coding import CodeBlock, LocalCommandLineCodeExecutor

snoop, work_dir, key = sys.argv[1].replace("PID", str(os.getpid())), sys.argv[2], sys.argv[3]
sandbox = sys.argv[4] == "sandbox"
assistant = AssistantAgent("assistant", llm_config={"config_list": [{"model": "m", "api_key": key}]})
executor = LocalCommandLineCodeExecutor(work_dir=work_dir, timeout=60, sandbox=sandbox)
print(executor.execute_code_blocks([CodeBlock(language="python", code=snoop)]).output)
print(execute_code(snoop, work_dir=work_dir, use_docker=False, sandbox=sandbox)[1])
# parley itself can still read its own /proc files once the code is done.
print("self:", os.environ["OPENAI_API_KEY"].encode() in Path("/proc/self/environ").read_bytes())
"""


@pytest.mark.parametrize("where", ["host", pytest.param("sandbox", marks=pytest.mark.bwrap)])
def test_code_cannot_read_parleys_environ_or_memory(tmp_path: Path, where: str) -> None:
    """parley started with a secret in its environment and holding an API key in memory.
    (In the bubblewrap sandbox parley's /proc entries do not even exist.)"""
    snoop = SNOOP.format(pid="PID", env=ENV_SECRET, mem=MEMORY_SECRET)
    done = subprocess.run(
        [sys.executable, "-c", VICTIM, snoop, str(tmp_path / "w"), MEMORY_SECRET, where],
        env={**os.environ, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": ENV_SECRET},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "LEAKED" not in done.stdout
    assert done.stdout.count("environ denied") == 2, done.stdout  # executor and legacy path
    assert done.stdout.count("memory denied") == 2, done.stdout
    assert "self: True" in done.stdout


WARN_SCRIPT = """
import sys, warnings
warnings.simplefilter("default")
from parley.code_utils import execute_code
from parley.coding import CodeBlock, LocalCommandLineCodeExecutor

executor = LocalCommandLineCodeExecutor(work_dir=sys.argv[1], timeout=60)
for _ in range(2):
    executor.execute_code_blocks([CodeBlock(language="python", code="print('ran')")])
execute_code("print('ran')", work_dir=sys.argv[1], use_docker=False)
"""


def test_running_on_the_host_warns_once(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WARN_SCRIPT, str(tmp_path / "w")],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stderr.count("UnsandboxedExecutionWarning") == 1, done.stderr
    assert "without a sandbox" in done.stderr


def test_the_readme_says_local_execution_is_not_isolation() -> None:
    readme = (REPO / "README.md").read_text()
    assert "Local execution is not isolation" in readme
