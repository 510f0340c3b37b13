"""What consuming a chat as a stream of typed events costs: the same two-agent chat of N turns
run by ``initiate_chat`` and by ``run`` with every event read through its iterator, in the same
process, against the same server, interleaved.

    PYTHONPATH=. python benchmarks/run_events.py [--turns 200] [--reps 7] [--stream]

The chat: two ``ConversableAgent``s (``human_input_mode="NEVER"``) whose llm_config points at a
``parley.testing.FakeLLMServer`` on loopback answering at once with a short text that is never
"TERMINATE", ``max_turns=N``, ``summary_method=None``, caching off. The baseline is
``a.initiate_chat(b, ..., silent=True)`` (no console output to time); the run is
``a.run(b, ...)`` with a loop over ``response.events`` in the caller's thread, counting each
event's ``type`` (the chat runs on parley's runner loop meanwhile). ``--stream`` makes the model
stream its replies, so the run also carries a ``stream`` event per chunk.

As in ``chat_overhead.py``, the server runs in this (driver) process and the chats in a worker
subprocess, so the worker's time is the framework's alone: building requests, the HTTP client,
parsing, history, and for the run its reports, events and the hand-off to the reading thread.
Per turn: the chat's time over N, by the wall clock and by the worker's CPU time (all its
threads: the work done, steadier than the wall clock on a busy machine). Each repetition runs
both back to back, alternating which goes first; the table shows each one's median and the
median of the repetitions' ratios. Exits 1 when the run's CPU time per turn is more than 10%
over ``initiate_chat``'s.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
from collections import Counter
from typing import Any

LIMIT = 1.10
Times = tuple[float, float]  # (wall, CPU of the process) seconds


def agents(config_list: list[dict[str, Any]], stream: bool) -> tuple[Any, Any]:
    from parley import ConversableAgent

    config: dict[str, Any] = {"config_list": config_list, "cache_seed": None}
    if stream:
        config["stream"] = True
    a, b = (
        ConversableAgent(
            name, llm_config=config, human_input_mode="NEVER", max_consecutive_auto_reply=10**6
        )
        for name in ("a", "b")
    )
    return a, b


def by_initiate_chat(config_list: list[dict[str, Any]], turns: int, stream: bool) -> Times:
    a, b = agents(config_list, stream)
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    a.initiate_chat(b, message="hi", max_turns=turns, silent=True, summary_method=None)
    return time.perf_counter() - start, time.process_time() - cpu


def by_run(
    config_list: list[dict[str, Any]], turns: int, stream: bool, seen: Counter[str]
) -> Times:
    a, b = agents(config_list, stream)
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    response = a.run(b, message="hi", max_turns=turns, summary_method=None)
    for event in response.events:
        seen[event.type] += 1
    elapsed = time.perf_counter() - start, time.process_time() - cpu
    if len(response.messages) != 2 * turns:
        raise SystemExit(f"the run's chat has {len(response.messages)} messages, not {2 * turns}")
    return elapsed


def worker(config_list: list[dict[str, Any]], turns: int, reps: int, stream: bool) -> None:
    """The measured side: prints one JSON line with every repetition's times."""
    base: list[Times] = []
    run: list[Times] = []
    seen: Counter[str] = Counter()
    by_initiate_chat(config_list, 5, stream)  # warm up: imports, connections
    by_run(config_list, 5, stream, Counter())
    for rep in range(reps):
        for which in ("base", "run") if rep % 2 == 0 else ("run", "base"):
            if which == "base":
                base.append(by_initiate_chat(config_list, turns, stream))
            else:
                run.append(by_run(config_list, turns, stream, seen))
        print(
            f"  rep {rep + 1}/{reps}: ms/turn (wall/CPU) initiate_chat "
            f"{base[-1][0] / turns * 1e3:.3f}/{base[-1][1] / turns * 1e3:.3f}, "
            f"run {run[-1][0] / turns * 1e3:.3f}/{run[-1][1] / turns * 1e3:.3f}",
            file=sys.stderr,
        )
    print(json.dumps({"base": base, "run": run, "seen": {k: v // reps for k, v in seen.items()}}))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--stream", action="store_true", help="the model streams its replies")
    parser.add_argument("--worker", metavar="CONFIG_LIST_JSON", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        worker(json.loads(args.worker), args.turns, args.reps, args.stream)
        return

    from parley.testing import FakeLLMServer

    with FakeLLMServer(default="a short answer") as server:
        argv = [
            sys.executable,
            __file__,
            f"--turns={args.turns}",
            f"--reps={args.reps}",
            *(["--stream"] if args.stream else []),
            "--worker",
            json.dumps(server.config_list(price=[0, 0])),
        ]
        done = subprocess.run(argv, stdout=subprocess.PIPE, text=True, timeout=3600, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    base: list[Times] = [tuple(t) for t in result["base"]]  # type: ignore[misc]
    run: list[Times] = [tuple(t) for t in result["run"]]  # type: ignore[misc]

    def ms(times: list[Times], i: int) -> float:
        return statistics.median(t[i] for t in times) / args.turns * 1e3

    def paired(i: int) -> float:
        # Each repetition's two chats ran back to back: the median of their ratios is
        # steadier than the ratio of the medians when the machine's load drifts.
        return statistics.median(r[i] / b[i] for r, b in zip(run, base, strict=True))

    ratio = paired(1)
    print(
        f"\n{args.turns}-turn chat, two LLM agents{' (streamed replies)' if args.stream else ''}, "
        f"median of {args.reps} runs each, interleaved"
    )
    print(f"{'':<30}{'wall':>12}{'CPU':>12}")
    print(f"{'initiate_chat, ms/turn':<30}{ms(base, 0):>12.3f}{ms(base, 1):>12.3f}")
    print(f"{'run, every event read, ms/turn':<30}{ms(run, 0):>12.3f}{ms(run, 1):>12.3f}")
    print(f"{'run / initiate_chat, paired':<30}{paired(0):>11.3f}x{ratio:>11.3f}x")
    print(f"limit {LIMIT:.2f}x on the CPU ratio")
    print(f"events per run: {dict(sorted(result['seen'].items()))}")
    if ratio > LIMIT:
        print(f"FAIL: the run costs {ratio:.3f}x initiate_chat per turn (limit {LIMIT:.2f}x)")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
