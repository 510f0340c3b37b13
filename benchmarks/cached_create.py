"""Per-call cost of a cache hit: a growing conversation replayed from the disk cache.

    python benchmarks/cached_create.py [--requests 200] [--runs 5] [--autogen PYTHON]

The requests are those of one agent in a long chat: request i sends the conversation so far
(1, 3, 5, ... messages), so the cache key covers ever more text. Each is made once against a
parley.testing.FakeLLMServer with ``cache_seed`` set (filling ``./.cache/<seed>`` in a temp
dir), then the whole sequence is replayed from the disk cache and timed: what is measured is
the wrapper's cached path (cache key, disk lookup, decoding the response, cost and usage).
parley is timed from async code (``await a_create``, on the caller's loop) and from sync code
(``create``, through parley's runner loop). With ``--autogen PYTHON`` (a venv's python with
pyautogen==0.2.35) AutoGen 0.2's ``OpenAIWrapper.create`` is timed the same way.

Each package runs in a worker subprocess (this file with ``--worker``) that imports only that
package; the table shows microseconds per call, the median of ``--runs`` replays.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

TEXT = "A turn of ordinary length, a sentence or two of what an agent would say. " * 2


def conversation(n: int) -> list[dict[str, Any]]:
    roles = ("user", "assistant")
    return [{"role": "system", "content": "You are helpful."}] + [
        {"role": roles[i % 2], "content": f"{i}: {TEXT}", "name": f"agent_{i % 2}"}
        for i in range(n)
    ]


def replay(calls: list[list[dict[str, Any]]], create: Callable[[Any], Any]) -> float:
    """Microseconds per ``create(messages)`` over ``calls``."""
    start = time.perf_counter()
    for messages in calls:
        create(messages)
    return (time.perf_counter() - start) / len(calls) * 1e6


def worker(package: str, base_url: str, requests: int, runs: int, seed: int) -> None:
    ag: Any = __import__(package)
    client = ag.OpenAIWrapper(
        config_list=[{"model": "gpt-4", "base_url": base_url, "api_key": "k"}], cache_seed=seed
    )
    calls = [conversation(2 * i + 1) for i in range(requests)]
    replay(calls, lambda m: client.create(messages=m))  # fills the cache
    results = {}
    if package == "parley":

        async def replay_async() -> float:
            start = time.perf_counter()
            for messages in calls:
                await client.a_create(messages=messages)
            return (time.perf_counter() - start) / len(calls) * 1e6

        results["parley a_create"] = statistics.median(
            asyncio.run(replay_async()) for _ in range(runs)
        )
    results[f"{package} create"] = statistics.median(
        replay(calls, lambda m: client.create(messages=m)) for _ in range(runs)
    )
    print(json.dumps(results))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=200, help="requests replayed (200)")
    parser.add_argument("--runs", type=int, default=5, help="replays timed (5)")
    parser.add_argument("--seed", type=int, default=4243, help="cache_seed (4243)")
    parser.add_argument("--autogen", metavar="PYTHON", help="python with pyautogen==0.2.35")
    parser.add_argument(
        "--worker", nargs=2, metavar=("PACKAGE", "BASE_URL"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.requests, args.runs, args.seed)
        return
    from parley.testing import FakeLLMServer

    pythons = {"parley": sys.executable}
    if args.autogen:
        pythons["autogen"] = args.autogen
    results: dict[str, float] = {}
    with FakeLLMServer(responder=lambda body: f"Reply to {len(body['messages'])}.") as server:
        for package, python in pythons.items():
            with tempfile.TemporaryDirectory(prefix=f"cached-create-{package}-") as cwd:
                command = [python, __file__, "--worker", package, server.base_url]
                command += [f"--requests={args.requests}", f"--runs={args.runs}"]
                command += [f"--seed={args.seed}"]
                done = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
                if done.returncode:
                    raise SystemExit(f"the {package} worker failed:\n{done.stderr}")
                results |= json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"cache hits over a growing conversation ({args.requests} requests, up to "
        f"{2 * args.requests - 1} messages), median of {args.runs} replays"
    )
    for name, us in results.items():
        print(f"{name:>16}: {us:8.1f} us/call")
    if "autogen create" in results:
        ratio = results["autogen create"] / results["parley create"]
        print(f"AutoGen / parley create: {ratio:.1f}x")


if __name__ == "__main__":
    main()
