"""Time per MCP tool call over stdio: parley's tool path against the bare SDK, in one run.

    PYTHONPATH=. python benchmarks/mcp_tool_call.py [--calls 300] [--repeats 3] [--max-ratio 1.2]

One MCP server (``benchmarks/_mcp_server.py``: the SDK's MCPServer with one cheap tool,
``add``) runs as a stdio process, opened with the SDK's ``stdio_client`` and ``ClientSession``;
the paths below call ``add`` in turn on that same session (so the server, its process and the
pipes are the same for all), ``--calls`` times per repeat, after a warm-up, on one event loop:

- ``sdk``: ``session.call_tool``, the bare SDK: the floor under every other path;
- ``toolkit``: ``MCPToolkit.call_tool`` of ``parley.mcp.create_toolkit(session)`` (the tool's
  lookup, the connection's request with its timeout and error handling, the result turned into
  text). A toolkit from ``parley.mcp.connect`` runs the same code per call: its owner task
  only opens and closes the connection;
- ``agent``: what an executor does with a model's tool call in a chat:
  ``executor.a_generate_reply`` on an assistant message holding one ``tool_calls`` entry (the
  reply functions, JSON arguments, the tool path with its reports and durable journal, the MCP
  call, the tool message). This is the framework time per MCP tool call the limit is about;
- ``hop``: ``toolkit.call_tool`` from this loop on a toolkit from ``parley.mcp.connect_sync``
  (a second process of the same server), whose connection lives on parley's background loop:
  each call crosses to that loop's thread and back. Only a toolkit used from a loop other than the one that connected it pays this
  (``connect`` in async code and ``connect_sync`` with sync chats do not), so it is shown, not
  held to the limit.

Each call's wall time is measured (the server is another process, so the time a caller waits
is the time that counts), and the process's CPU time beside it (the client's own work: the
SDK's and parley's, not the server's). The script prints the median of each per repeat and
each path's ratio to ``sdk``; it exits 1 when the median over the repeats of the ``toolkit``
or ``agent`` wall-time ratio is above ``--max-ratio``. The CPU ratios are printed for
information: they show what parley adds to the client's work alone, without the server's time
and the pipes'.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

import parley.mcp
from parley import ConversableAgent
from parley.io import IOStream

SERVER = str(Path(__file__).with_name("_mcp_server.py"))
ARGS = {"a": 20, "b": 22}
PATHS = ("sdk", "toolkit", "agent", "hop")
HELD_TO_THE_LIMIT = ("toolkit", "agent")


class Quiet:
    """The console's work, written to /dev/null: the executor still formats and prints its
    ``EXECUTING FUNCTION`` lines, but the benchmark's output stays readable."""

    def __init__(self) -> None:
        self.sink = open(os.devnull, "w")  # noqa: SIM115 (closed at the end of main)

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        print(*objects, sep=sep, end=end, flush=flush, file=self.sink)

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        raise RuntimeError("the benchmark asks no human")


def tool_call_message() -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "add", "arguments": json.dumps(ARGS)},
            }
        ],
    }


async def measure(
    calls: dict[str, Callable[[], Awaitable[Any]]], rounds: int
) -> dict[str, tuple[float, float]]:
    """``{path: (median wall µs, median CPU µs)}`` per call, the paths taking turns in an
    order shuffled every round: a call can slow the next one down (the hop's thread finishing
    its work), so no path may always come after the same other."""
    wall: dict[str, list[float]] = {name: [] for name in calls}
    cpu: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(20):  # warm-up: imports, caches, the servers' first calls
        for call in calls.values():
            await call()
    names = list(calls)
    shuffled = random.Random(38)
    for _ in range(rounds):
        shuffled.shuffle(names)
        for name in names:
            call = calls[name]
            t, c = time.perf_counter(), time.process_time()
            await call()
            wall[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
    return {
        name: (statistics.median(wall[name]) * 1e6, statistics.median(cpu[name]) * 1e6)
        for name in calls
    }


def check(name: str, answer: Any) -> None:
    text = answer if isinstance(answer, str) else json.dumps(answer, default=str)
    if "42" not in text:
        raise SystemExit(f"{name}: unexpected answer {text!r}")


async def run(args: argparse.Namespace, hop_toolkit: parley.mcp.MCPToolkit) -> list[dict[str, Any]]:
    params = StdioServerParameters(command=sys.executable, args=[SERVER])
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        async with await parley.mcp.create_toolkit(session) as toolkit:
            caller = ConversableAgent("caller", llm_config=False, human_input_mode="NEVER")
            executor = ConversableAgent("executor", llm_config=False, human_input_mode="NEVER")
            toolkit.register(executor=executor)
            message = tool_call_message()

            async def sdk() -> Any:
                return (await session.call_tool("add", ARGS)).structured_content

            async def agent() -> Any:
                reply = await executor.a_generate_reply(messages=[message], sender=caller)
                return reply

            calls: dict[str, Callable[[], Awaitable[Any]]] = {
                "sdk": sdk,
                "toolkit": lambda: toolkit.call_tool("add", ARGS),
                "agent": agent,
                "hop": lambda: hop_toolkit.call_tool("add", ARGS),
            }
            for name, call in calls.items():
                check(name, await call())
            return [await measure(calls, args.calls) for _ in range(args.repeats)]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per path per repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-ratio", type=float, default=1.2)
    args = parser.parse_args()
    quiet = Quiet()
    IOStream.set_global_default(quiet)
    config = {"mcpServers": {"bench": {"command": sys.executable, "args": [SERVER]}}}
    with parley.mcp.connect_sync(config) as hop_toolkit:
        results = asyncio.run(run(args, hop_toolkit))
    quiet.sink.close()

    print(f"{'repeat':>6} " + " ".join(f"{p + ' wall':>13} {p + ' cpu':>12}" for p in PATHS))
    for i, row in enumerate(results, 1):
        cells = " ".join(f"{row[p][0]:11.0f}µs {row[p][1]:10.0f}µs" for p in PATHS)
        print(f"{i:>6} {cells}")
    print("\nratio to the bare SDK call (median over the repeats): wall time, CPU time")
    worst = 0.0
    for path in PATHS[1:]:
        wall = statistics.median(r[path][0] / r["sdk"][0] for r in results)
        cpu = statistics.median(r[path][1] / r["sdk"][1] for r in results)
        if path in HELD_TO_THE_LIMIT:
            worst = max(worst, wall)
        note = "" if path in HELD_TO_THE_LIMIT else "  (shown only: a cross-loop call)"
        print(f"  {path:<8} {wall:5.2f}x  {cpu:5.2f}x{note}")
    verdict = "within" if worst <= args.max_ratio else "OVER"
    print(f"worst wall-time ratio {worst:.2f}: {verdict} the {args.max_ratio:.2f} limit")
    return 0 if worst <= args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
