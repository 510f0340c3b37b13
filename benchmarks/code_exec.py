"""Time to run one short Python block: parley locally (plain and in the bubblewrap sandbox), in
Jupyter kernels, in Docker, and AutoGen 0.2 in Docker.

    python benchmarks/code_exec.py [--image parley-sandbox:latest] [--rounds 20]
                                   [--autogen PATH/TO/venv/bin/python] [--skip docker,jupyter]

Reports the median wall time per block of ``print(1)``:

* parley ``LocalCommandLineCodeExecutor`` (a process on this machine, under the supervisor that
  keeps every process the block starts: ``parley/coding/_reaper.py``), and the bare floor under
  it: ``subprocess.run`` of the same file, with nothing contained;
* parley ``LocalCommandLineCodeExecutor(sandbox=True)``: each block under bubblewrap (target:
  at most 2x the plain local executor);
* the Jupyter executors on a warm kernel (target: at most 50 ms per block):
  ``EmbeddedIPythonCodeExecutor``, ``JupyterCodeExecutor`` over a ``LocalJupyterServer`` (a
  kernel gateway process) and over a ``DockerJupyterServer``, with the floor under them: the bare
  ``jupyter_client`` (``KernelClient.execute_interactive``) on a kernel of its own;
* parley ``DockerCommandLineCodeExecutor``, reusing its one container (the first block, which
  creates the container, is timed separately);
* parley ``code_utils.execute_code(use_docker=IMAGE)``, the legacy path, which also reuses a
  container;
* with ``--autogen``, pyautogen 0.2.35's ``execute_code(use_docker=IMAGE)`` run by that
  interpreter: a new container per call, then an image committed from it. The images it
  commits are removed at the end. (AutoGen runs on the host instead when ``/.dockerenv``
  exists; the benchmark turns that check off so that it measures AutoGen's Docker path.)

The image defaults to ``$PARLEY_SANDBOX_IMAGE`` or ``parley-sandbox:latest``
(``scripts/build-sandbox-image.sh`` builds it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CODE = "print(1)"

AUTOGEN_SNIPPET = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
import docker
import autogen.code_utils
from autogen.code_utils import execute_code
# AutoGen silently runs code on the host when /.dockerenv exists (as on machines that are
# themselves containers); make it use Docker as asked.
autogen.code_utils.in_docker_container = lambda: False
image, rounds, work_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
client = docker.from_env()
samples, committed = [], set()
for _ in range(rounds):
    start = time.perf_counter()
    exit_code, logs, used = execute_code({code!r}, work_dir=work_dir, use_docker=image)
    samples.append(time.perf_counter() - start)
    assert exit_code == 0 and logs.strip() == "1", (exit_code, logs)
    committed.add(client.images.get(used).id)
client.close()
print(json.dumps({{"samples": samples, "committed": sorted(committed)}}))
"""


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def time_calls(call: Callable[[], None], rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return samples


def parley_local(rounds: int, work_dir: Path) -> list[float]:
    from parley.coding import CodeBlock, LocalCommandLineCodeExecutor

    executor = LocalCommandLineCodeExecutor(work_dir=work_dir)

    def call() -> None:
        result = executor.execute_code_blocks([CodeBlock(language="python", code=CODE)])
        assert result.exit_code == 0, result.output

    return time_calls(call, rounds)


def bare_local(rounds: int, work_dir: Path) -> list[float]:
    path = work_dir / "block.py"
    path.write_text(CODE)

    def call() -> None:
        done = subprocess.run([sys.executable, str(path)], capture_output=True, check=True)
        assert done.stdout.strip() == b"1"

    return time_calls(call, rounds)


def parley_sandboxed(rounds: int, work_dir: Path) -> list[float]:
    from parley.coding import CodeBlock, LocalCommandLineCodeExecutor

    executor = LocalCommandLineCodeExecutor(work_dir=work_dir, sandbox=True)

    def call() -> None:
        result = executor.execute_code_blocks([CodeBlock(language="python", code=CODE)])
        assert result.exit_code == 0, result.output

    return time_calls(call, rounds)


def warm_jupyter(executor: Any, rounds: int) -> list[float]:
    """Blocks on a kernel that has already run one."""
    from parley.coding import CodeBlock

    def call() -> None:
        result = executor.execute_code_blocks([CodeBlock(language="python", code=CODE)])
        assert result.exit_code == 0, result.output
        assert result.output.strip() == "1", result.output

    call()
    return time_calls(call, rounds)


def parley_embedded(rounds: int, work_dir: Path) -> list[float]:
    from parley.coding.jupyter import EmbeddedIPythonCodeExecutor

    with EmbeddedIPythonCodeExecutor(output_dir=str(work_dir)) as executor:
        return warm_jupyter(executor, rounds)


def parley_gateway(rounds: int, work_dir: Path) -> list[float]:
    from parley.coding.jupyter import JupyterCodeExecutor, LocalJupyterServer

    with (
        LocalJupyterServer() as server,
        JupyterCodeExecutor(server, output_dir=work_dir) as executor,
    ):
        return warm_jupyter(executor, rounds)


def parley_docker_gateway(rounds: int, work_dir: Path) -> list[float]:
    from parley.coding.jupyter import DockerJupyterServer, JupyterCodeExecutor

    with (
        DockerJupyterServer() as server,
        JupyterCodeExecutor(server, output_dir=work_dir) as executor,
    ):
        return warm_jupyter(executor, rounds)


def bare_jupyter_client(rounds: int) -> list[float]:
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:

        def call() -> None:
            reply = client.execute_interactive(CODE, timeout=10, output_hook=lambda _msg: None)
            assert reply["content"]["status"] == "ok"

        call()
        return time_calls(call, rounds)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        manager.cleanup_resources()


def parley_docker(rounds: int, work_dir: Path, image: str) -> tuple[float, list[float]]:
    from parley.coding import CodeBlock
    from parley.coding.docker_commandline_code_executor import DockerCommandLineCodeExecutor

    with DockerCommandLineCodeExecutor(image=image, work_dir=work_dir) as executor:

        def call() -> None:
            result = executor.execute_code_blocks([CodeBlock(language="python", code=CODE)])
            assert result.exit_code == 0, result.output

        first = time_calls(call, 1)[0]
        return first, time_calls(call, rounds)


def parley_legacy(rounds: int, work_dir: Path, image: str) -> list[float]:
    from parley.code_utils import execute_code
    from parley.coding.docker_commandline_code_executor import _close_legacy_executors

    def call() -> None:
        exit_code, logs, _ = execute_code(CODE, work_dir=str(work_dir), use_docker=image)
        assert exit_code == 0, logs

    try:
        time_calls(call, 1)  # creates the container
        return time_calls(call, rounds)
    finally:
        _close_legacy_executors()


def autogen_docker(python: str, rounds: int, work_dir: Path, image: str) -> list[float]:
    done = subprocess.run(
        [python, "-c", AUTOGEN_SNIPPET.format(code=CODE), image, str(rounds), str(work_dir)],
        capture_output=True,
        text=True,
        timeout=60 + 30 * rounds,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"AutoGen's run failed:\n{done.stderr[-2000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    # AutoGen committed an image after every run: remove what it left.
    subprocess.run(
        ["docker", "rmi", "--force", *report["committed"]],
        capture_output=True,
        timeout=120,
        check=False,
    )
    return list(report["samples"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--image", default=os.environ.get("PARLEY_SANDBOX_IMAGE") or "parley-sandbox:latest"
    )
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--autogen", help="python of a venv with pyautogen==0.2.35 installed")
    parser.add_argument("--skip", default="", help="comma-separated: docker, jupyter, sandbox")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in ("bare", "local", "sandbox", "docker", "legacy", "autogen", "jupyter"):
            (root / name).mkdir()
        rows.append(
            (
                "subprocess.run, same file (no containment)",
                median_ms(bare_local(args.rounds, root / "bare")),
            )
        )
        local = median_ms(parley_local(args.rounds, root / "local"))
        rows.append(("parley local executor", local))
        if "sandbox" not in skip:
            sandboxed = median_ms(parley_sandboxed(args.rounds, root / "sandbox"))
            rows.append(("parley local executor, sandbox=True (bwrap)", sandboxed))
        if "jupyter" not in skip:
            rows.append(
                (
                    "jupyter_client execute_interactive (floor)",
                    median_ms(bare_jupyter_client(args.rounds)),
                )
            )
            rows.append(
                (
                    "parley EmbeddedIPythonCodeExecutor, warm",
                    median_ms(parley_embedded(args.rounds, root / "jupyter")),
                )
            )
            rows.append(
                (
                    "parley JupyterCodeExecutor + LocalJupyterServer",
                    median_ms(parley_gateway(args.rounds, root / "jupyter")),
                )
            )
            if "docker" not in skip:
                rows.append(
                    (
                        "parley JupyterCodeExecutor + DockerJupyterServer",
                        median_ms(parley_docker_gateway(args.rounds, root / "jupyter")),
                    )
                )
        if "docker" not in skip:
            first, samples = parley_docker(args.rounds, root / "docker", args.image)
            rows.append(("parley Docker executor, first block", first * 1000))
            rows.append(("parley Docker executor, reused container", median_ms(samples)))
            legacy = parley_legacy(args.rounds, root / "legacy", args.image)
            rows.append(("parley execute_code(use_docker=IMAGE)", median_ms(legacy)))
        if args.autogen and "docker" not in skip:
            theirs = autogen_docker(
                args.autogen, max(3, args.rounds // 2), root / "autogen", args.image
            )
            rows.append(("AutoGen 0.2.35 execute_code(use_docker=IMAGE)", median_ms(theirs)))
    print(f"image: {args.image}; block: {CODE!r}; median of {args.rounds} rounds\n")
    print(f"| {'path':<50} | {'ms/block':>9} | {'x parley local':>14} |")
    print(f"|{'-' * 52}|{'-' * 11}|{'-' * 16}|")
    for name, ms in rows:
        print(f"| {name:<50} | {ms:9.1f} | {ms / local:14.2f} |")


if __name__ == "__main__":
    sys.exit(main())
