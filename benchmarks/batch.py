"""A batch of two-agent chats: parley.batch's local backend against its Ray backend.

    python benchmarks/batch.py                      # 2,000 chats x 6 turns, 200 ms replies
    python benchmarks/batch.py --chats 200          # a quick run
    python benchmarks/batch.py --nodes 1,2 --concurrency 400

Each chat is two ``ConversableAgent``s (LLM agents, no caching) talking for ``--turns`` turns:
``2 * turns - 1`` requests in a row (the first message is the task). The model is
``python -m parley.testing.server`` in a process of its own on loopback, answering every
request after ``--delay`` seconds.

Two floors bound what a batch can do:

- latency: ``concurrency`` chats at once, each a chain of requests of ``delay`` seconds:
  ``chats * (2 * turns - 1) * delay / concurrency`` seconds;
- CPU: each request costs the client (and the fake server) some CPU time, measured first
  with a zero-delay server (one chat, requests in a row). One process does that work on one
  core, so the local backend cannot go below ``requests * per-request cost``; Ray's workers
  spread it over processes (this machine's cores, shared with the fake server and Ray).

The Ray runs use a real cluster on loopback: a head node without CPUs for the workers, and
1 (then 2) worker nodes of one CPU each, started with ``ray start`` (tests/batch/_ray_cluster)
and stopped at the end. A Ray batch's time includes starting its worker actors.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from parley import ConversableAgent  # noqa: E402
from parley.batch import BatchItem, RayBackend, run_chats  # noqa: E402

REPLY = "Noted; here is the next step of the plan, in a sentence or two of plain text."


class Chat:
    """One batch chat: two LLM agents, ``turns`` turns (pickled by value for Ray: it is
    defined in the script, ``__main__``)."""

    def __init__(self, base_url: str, turns: int) -> None:
        self.config = {
            "config_list": [{"model": "gpt-4o-mini", "base_url": base_url, "api_key": "x"}],
            "cache_seed": None,
        }
        self.turns = turns

    async def __call__(self, item: BatchItem[int]) -> Any:
        a = ConversableAgent("a", llm_config=self.config, human_input_mode="NEVER")
        b = ConversableAgent("b", llm_config=self.config, human_input_mode="NEVER")
        return await item.a_initiate_chat(
            a, b, message=f"Plan task {item.input}.", max_turns=self.turns
        )


def start_server(delay: float, folder: Path) -> tuple[subprocess.Popen[str], str]:
    script = folder / f"script-{delay}.json"
    script.write_text(json.dumps({"default": {"content": REPLY, "delay": delay}}))
    process = subprocess.Popen(
        [sys.executable, "-m", "parley.testing.server", "--port", "0", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    port = int(process.stdout.readline().strip())
    return process, f"http://127.0.0.1:{port}/v1"


def per_request_cost(base_url: str, turns: int = 50) -> float:
    """Seconds per request of one chat against a zero-delay server (client + server CPU)."""
    chat = Chat(base_url, turns)
    run_chats(chat, [0])  # warm-up: imports, the connection pool
    start = time.perf_counter()
    run_chats(chat, [1])
    return (time.perf_counter() - start) / (2 * turns - 1)


def timed(
    label: str, args: argparse.Namespace, base_url: str, backend: Any, requests: int
) -> dict[str, Any]:
    start = time.perf_counter()
    batch = run_chats(
        Chat(base_url, args.turns),
        range(args.chats),
        backend=backend,
        concurrency=args.concurrency,
        progress=False,
    )
    wall = time.perf_counter() - start
    if not batch.ok or batch.usage.llm_calls != requests:
        raise SystemExit(f"{label}: {batch!r}, expected {requests} requests")
    print(f"  {label}: {wall:.1f} s, {args.chats / wall:.1f} chats/s", file=sys.stderr)
    return {"label": label, "wall": wall, "workers": len(batch.workers)}


def ray_runs(args: argparse.Namespace, base_url: str, requests: int, root: Path) -> list[Any]:
    from tests.batch._ray_cluster import HOST, Cluster, auth_env

    # Token authentication on, with a random token of this run (in the environment only),
    # before Ray is imported: it reads RAY_AUTH_MODE once, at import.
    os.environ.update(auth_env())
    import ray

    rows = []
    for count in args.nodes:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        }
        cluster = Cluster(root / f"ray-{count}", env)
        (root / f"ray-{count}").mkdir()
        try:
            cluster.start_head(num_cpus=0)
            cluster.add_nodes([f"w{i}" for i in range(count)], num_cpus=1)
            ray.init(address=cluster.address, _node_ip_address=HOST, log_to_driver=False)
            backend = RayBackend(workers=count)
            label = f"ray, {count} worker node{'s' if count > 1 else ''}"
            rows.append(timed(label, args, base_url, backend, requests))
        finally:
            ray.shutdown()
            cluster.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chats", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds per reply (0.2)")
    parser.add_argument("--concurrency", type=int, default=400, help="chats at once (400)")
    parser.add_argument(
        "--nodes", default="1,2", help="Ray worker node counts to run, comma-separated (1,2)"
    )
    parser.add_argument("--no-local", action="store_true", help="skip the local backend")
    args = parser.parse_args()
    args.nodes = [int(n) for n in args.nodes.split(",") if n.strip()]
    chain = 2 * args.turns - 1
    requests = args.chats * chain
    latency_floor = requests * args.delay / args.concurrency

    with tempfile.TemporaryDirectory(prefix="parley-batch-bench-") as tmp:
        root = Path(tmp)
        instant, instant_url = start_server(0.0, root)
        try:
            cost = per_request_cost(instant_url)
        finally:
            instant.terminate()
            instant.wait(10)
        server, base_url = start_server(args.delay, root)
        try:
            rows = []
            if not args.no_local:
                rows.append(timed("local", args, base_url, "local", requests))
            rows += ray_runs(args, base_url, requests, root)
        finally:
            server.terminate()
            server.wait(10)

    cpu_floor = requests * cost
    print(
        f"\n{args.chats} chats x {args.turns} turns ({chain} requests each, {requests} in all), "
        f"{args.delay * 1000:g} ms per reply, concurrency {args.concurrency}; "
        f"{os.cpu_count()} cores"
    )
    print(
        f"latency floor: {latency_floor:.1f} s ({args.chats / latency_floor:.1f} chats/s); "
        f"per-request cost (client + fake server, one core): {cost * 1000:.2f} ms, "
        f"so one process needs {cpu_floor:.1f} s ({args.chats / cpu_floor:.1f} chats/s)"
    )
    print(f"{'backend':<26}{'wall s':>9}{'chats/s':>10}{'/ latency floor':>17}{'/ CPU floor':>13}")
    for row in rows:
        wall = row["wall"]
        print(
            f"{row['label']:<26}{wall:>9.1f}{args.chats / wall:>10.1f}"
            f"{wall / latency_floor:>16.2f}x{wall / cpu_floor:>12.2f}x"
        )


if __name__ == "__main__":
    main()
