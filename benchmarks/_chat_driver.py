"""Driver side shared by benchmarks/chat_overhead.py and benchmarks/concurrent_chats.py.

The driver owns a parley.testing.FakeLLMServer on loopback and runs benchmarks/_chat_worker.py
in a subprocess per package (AutoGen's interpreter or parley's), answering the worker's phase
marks with the number of requests the server has received so far.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parley.testing import FakeLLMServer

WORKER = Path(__file__).with_name("_chat_worker.py")
PREFIX = "@@bench "
WORDS = (
    *("sure", "apple", "river", "quiet", "blue", "seven", "garden", "lamp", "north", "paper"),
    *("coffee", "window", "maybe", "bright", "stone", "tiny", "orange", "music", "cloud"),
    *("basket", "silver", "early", "pencil", "honest"),
)


def reply_text(body: dict[str, Any]) -> str:
    """A short reply that depends only on the request (so a disk-cache replay hits), varies from
    turn to turn, and is never "TERMINATE"."""
    messages = body.get("messages") or []
    last = messages[-1].get("content") if messages else ""
    key = f"{len(messages)}|{last}".encode()
    digest = hashlib.blake2b(key, digest_size=8).digest()
    words = " ".join(WORDS[b % len(WORDS)] for b in digest[: 3 + digest[7] % 5])
    return f"Point {len(messages)}: {words}."


def add_common_args(parser: argparse.ArgumentParser, runs: int, timeout: float) -> None:
    parser.add_argument(
        "--autogen",
        metavar="PYTHON",
        help="python of a venv with pyautogen==0.2.35 (e.g. /tmp/agvenv/bin/python); "
        "unset: AutoGen is not measured",
    )
    parser.add_argument(
        "--parley",
        metavar="PYTHON",
        default=sys.executable,
        help="python with parley installed (default: this interpreter)",
    )
    parser.add_argument(
        "--only",
        choices=("parley", "autogen"),
        help="measure only this package (--only autogen needs --autogen)",
    )
    parser.add_argument(
        "--runs", type=int, default=runs, help=f"worker runs per package (default {runs})"
    )
    parser.add_argument(
        "--model",
        default="gpt-4",
        help="model name sent to the fake server (default gpt-4: a name AutoGen knows the "
        "price of, so it does not log a warning per call)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=timeout,
        help=f"seconds allowed per worker process (default {timeout:g})",
    )


def packages(args: argparse.Namespace, parser: argparse.ArgumentParser) -> dict[str, str]:
    """{package: python} to measure, parley first."""
    wanted = {"parley": args.parley}
    if args.autogen:
        wanted["autogen"] = args.autogen
    if args.only == "autogen" and not args.autogen:
        parser.error("--only autogen needs --autogen PYTHON (e.g. /tmp/agvenv/bin/python)")
    if args.only:
        wanted = {args.only: wanted[args.only]}
    return wanted


def start_server(**kwargs: Any) -> FakeLLMServer:
    return FakeLLMServer(**kwargs).start()


@dataclass
class WorkerRun:
    """One finished worker: its result line and the requests the server saw in each phase."""

    result: dict[str, Any]
    requests: dict[str, int] = field(default_factory=dict)
    stderr: str = ""


class WorkerError(RuntimeError):
    pass


def run_worker(
    python: str,
    package: str,
    server: FakeLLMServer,
    worker_args: Sequence[str],
    *,
    cwd: str,
    timeout: float,
) -> WorkerRun:
    """Run the worker to completion (killing it after ``timeout`` s), answering its marks."""
    argv = [
        python,
        "-I",  # isolated: no script dir or cwd on sys.path, no PYTHON* env, no user site
        str(WORKER),
        "--package",
        package,
        "--base-url",
        server.base_url,
        *worker_args,
    ]
    env = dict(os.environ)
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    env.setdefault("OPENAI_API_KEY", "sk-bench")
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
    if stdin is None or stdout is None or stderr is None:
        raise WorkerError("could not open pipes to the worker")
    lines: queue.Queue[str | None] = queue.Queue()
    err_chunks: list[str] = []

    def pump_stdout() -> None:
        for line in stdout:
            lines.put(line)
        lines.put(None)

    def pump_stderr() -> None:
        err_chunks.append(stderr.read())

    threads = [threading.Thread(target=f, daemon=True) for f in (pump_stdout, pump_stderr)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    before = len(server.requests)
    counts: dict[str, int] = {}
    result: dict[str, Any] | None = None
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerError(f"{package} worker timed out after {timeout:g} s")
            try:
                line = lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                break
            if not line.startswith(PREFIX):
                continue  # stray output of the package under test
            message = json.loads(line[len(PREFIX) :])
            if message["event"] == "mark":
                now = len(server.requests)
                counts[message["label"]] = now - before
                before = now
                stdin.write("go\n")
                stdin.flush()
            elif message["event"] == "result":
                result = message
        proc.wait(max(0.1, deadline - time.monotonic()))
    except (WorkerError, subprocess.TimeoutExpired, OSError) as e:
        proc.kill()
        proc.wait()
        for t in threads:
            t.join(5)
        raise WorkerError(f"{e}\n{''.join(err_chunks)[-3000:]}") from e
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        stdin.close()
    for t in threads:
        t.join(5)
    err_text = "".join(err_chunks)
    if proc.returncode != 0 or result is None:
        raise WorkerError(f"{package} worker failed (exit {proc.returncode}):\n{err_text[-3000:]}")
    if server.errors:
        raise WorkerError(f"the fake server's responder raised: {server.errors!r}")
    return WorkerRun(result, counts, err_text)


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def fmt(value: float | None, unit: str = "", width: int = 12, digits: int = 1) -> str:
    text = "-" if value is None else f"{value:.{digits}f}{unit}"
    return f"{text:>{width}}"
